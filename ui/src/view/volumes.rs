//! The volumes pane: each claim followed to its mounts — PVC → PV → volume ID →
//! VolumeAttachment (node) → staging path → publish targets — with the CSI lifecycle drawn
//! as a progression: `● CREATED ━ ● NODE_READY ━ ○ VOL_READY ━ ○ PUBLISHED`. On a narrow
//! pane the chain wraps at its arrows and the progression between states; the paths keep
//! the part that differs (the volume's hash, the pod's UID, the PV) and lose the rest first.
//! A node where the volume is refused (`Multi-Attach error`) gets a row of its own; during a
//! lesson step, the row of the claim it is about stays in view. While a CSI flow is stepped
//! (`pod create … --pvc CLAIM --step`), what the call shown changed is highlighted and kept
//! in view: the chain for CreateVolume and ControllerPublishVolume, the staging line for
//! NodeStageVolume, the pod's publish line for NodePublishVolume.

use super::{dim, pane_block, put};
use crate::app::App;
use crate::keymap::Pane;
use lab_engine::dash::{VolumeRow, VolumeState, volume_rows};
use lab_engine::lesson::csi_stepping::Changed;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Rows of content (for scrolling).
pub fn content_len(app: &App) -> usize {
    let w = app.viewport(Pane::Volumes).width as usize;
    volume_rows(&app.desk.lab)
        .iter()
        .map(|v| row_lines(app, v, w).len())
        .sum::<usize>()
        .max(2)
}

/// The lifecycle progression of a volume.
pub fn progression(app: &App, state: Option<VolumeState>) -> Line<'static> {
    Line::from(
        progression_segments(app, state)
            .into_iter()
            .flatten()
            .collect::<Vec<_>>(),
    )
}

/// The progression as segments (a state with the rule before it), to wrap between states.
/// A claim with no volume yet (`None`) is at `Pending`, before CREATED.
fn progression_segments(app: &App, state: Option<VolumeState>) -> Vec<Vec<Span<'static>>> {
    let t = &app.theme;
    let mut segs = Vec::new();
    let Some(state) = state else {
        segs.push(vec![Span::styled(
            "◉ Pending",
            t.step_done
                .add_modifier(ratatui::style::Modifier::UNDERLINED),
        )]);
        for s in VolumeState::ALL {
            segs.push(vec![
                Span::styled(" ━ ", t.dim),
                Span::styled(format!("○ {}", s.label()), t.dim),
            ]);
        }
        return segs;
    };
    for (i, s) in VolumeState::ALL.iter().enumerate() {
        let mut seg = Vec::new();
        if i > 0 {
            seg.push(Span::styled(
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
        seg.push(Span::styled(format!("{mark}{}", s.label()), style));
        segs.push(seg);
    }
    segs
}

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "—".to_string()
    } else {
        s.to_string()
    }
}

/// Whether a path component or a name is an ID (a hash, a UUID, `pvc-<uuid>`): long, and
/// hex digits and dashes after its prefix.
fn is_id(part: &str) -> bool {
    let body = part.strip_prefix("pvc-").unwrap_or(part);
    body.len() >= 16 && body.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// An ID shortened to its prefix and first eight digits: `pvc-76511c8b…`.
fn short(part: &str) -> String {
    if !is_id(part) {
        return part.to_string();
    }
    let (prefix, body) = match part.strip_prefix("pvc-") {
        Some(b) => ("pvc-", b),
        None => ("", part),
    };
    format!("{prefix}{}…", body.chars().take(8).collect::<String>())
}

/// A path in `width` columns: whole when it fits; else with its IDs shortened; else also
/// without its leading directories (`…/`), never dropping an ID or what follows it — the
/// part that differs between volumes and pods stays.
pub fn short_path(path: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if path.width() <= width {
        return path.to_string();
    }
    let parts: Vec<String> = path.split('/').map(short).collect();
    let mut shown = parts.join("/");
    let first_id = parts
        .iter()
        .position(|p| p.ends_with('…'))
        .unwrap_or(parts.len().saturating_sub(1));
    let mut from = 1;
    while shown.width() > width && from < first_id {
        from += 1;
        shown = format!("…/{}", parts[from..].join("/"));
    }
    if shown.width() > width {
        // Only the IDs and the last component, the directories between them as `…`.
        let last = parts.len().saturating_sub(1);
        let mut kept: Vec<&str> = Vec::new();
        for (i, p) in parts.iter().enumerate().skip(from) {
            if p.ends_with('…') || i == last {
                kept.push(p);
            } else if kept.last() != Some(&"…") {
                kept.push("…");
            }
        }
        shown = format!("…/{}", kept.join("/"));
    }
    shown
}

/// Which of a row's lines the stepped CSI call changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lit<'a> {
    /// None of them.
    No,
    /// The chain (the volume, its PV, its attachment).
    Chain,
    /// The staging line.
    Staging,
    /// The publish line of this target.
    Target(&'a str),
}

/// What of a row the CSI call being stepped changed.
fn lit<'a>(app: &'a App, v: &VolumeRow) -> Lit<'a> {
    let Some(c) = app
        .desk
        .stepping()
        .and_then(|s| s.csi())
        .and_then(|s| s.step().change.as_ref())
    else {
        return Lit::No;
    };
    if c.volume_id != v.volume_id || v.multi_attach.is_some() {
        return Lit::No;
    }
    let on_node = c.node.as_deref().is_none_or(|n| n == v.node);
    // A teardown call took its line away: the volume's chain is what is left to show, on
    // the node or, once detached from every node, the claim's own row.
    if c.removed {
        return if on_node || v.node.is_empty() {
            Lit::Chain
        } else {
            Lit::No
        };
    }
    if !on_node {
        return Lit::No;
    }
    match &c.object {
        Changed::Volume { .. } | Changed::Attachment { .. } => Lit::Chain,
        Changed::Staging { .. } => Lit::Staging,
        Changed::Target { path } => Lit::Target(path),
    }
}

/// A line in the highlight's style.
fn lit_line(app: &App, mut l: Line<'static>) -> Line<'static> {
    for s in &mut l.spans {
        s.style = s.style.patch(app.theme.selected);
    }
    l
}

/// A volume's rows at a width: the chain PVC → PV → volume ID → attachment @node (wrapped
/// at the arrows), the staging path and each publish target (shortened to fit), and the
/// lifecycle progression (wrapped between states); on a node where the volume is refused,
/// the Multi-Attach error and the pods that wait.
fn row_lines(app: &App, v: &VolumeRow, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let chain = |pv: String, att: String| {
        vec![
            vec![Span::styled(v.pvc.clone(), t.name)],
            vec![Span::styled(" → ", t.dim), Span::styled(pv, t.plain)],
            vec![
                Span::styled(" → ", t.dim),
                Span::styled(or_dash(&v.volume_id), t.plain),
            ],
            vec![
                Span::styled(" → ", t.dim),
                Span::styled(att, t.plain),
                Span::styled(
                    if v.node.is_empty() {
                        String::new()
                    } else {
                        format!(" @{}", v.node)
                    },
                    t.plain,
                ),
            ],
        ]
    };
    let mut out = super::wrap_segments(chain(or_dash(&v.pv), or_dash(&v.attachment)), width, 2);
    if out.len() > 1 {
        // Shortened IDs first, then wrapped.
        out = super::wrap_segments(
            chain(short(&or_dash(&v.pv)), short(&or_dash(&v.attachment))),
            width,
            2,
        );
    }
    let lit = lit(app, v);
    if lit == Lit::Chain {
        out = out.into_iter().map(|l| lit_line(app, l)).collect();
    }
    if let Some(m) = &v.multi_attach {
        // Not attached here: the attach/detach controller's refusal, wrapped whole.
        let segs = vec![
            vec![Span::styled("  ✗ Multi-Attach error:", t.bad)],
            vec![Span::styled(
                format!(" attached to {}", m.attached_to.join(", ")),
                t.plain,
            )],
            vec![Span::styled(" · waiting:", t.dim)],
            vec![Span::styled(format!(" {}", m.waiting.join(", ")), t.name)],
        ];
        out.extend(super::wrap_segments(segs, width, 4));
        return out;
    }
    const STAGING: &str = "  staging ";
    const PUBLISH: &str = "  publish ";
    let room = width.saturating_sub(STAGING.len());
    let staging = Line::from(vec![
        Span::styled(STAGING, t.dim),
        Span::styled(
            if v.staging.is_empty() {
                "—".to_string()
            } else {
                short_path(&v.staging, room)
            },
            t.plain,
        ),
    ]);
    out.push(if lit == Lit::Staging {
        lit_line(app, staging)
    } else {
        staging
    });
    if v.targets.is_empty() {
        out.push(Line::from(vec![
            Span::styled(PUBLISH, t.dim),
            Span::styled("—", t.plain),
        ]));
    }
    for target in &v.targets {
        let l = Line::from(vec![
            Span::styled(PUBLISH, t.dim),
            Span::styled(short_path(target, room), t.plain),
        ]);
        out.push(if lit == Lit::Target(target) {
            lit_line(app, l)
        } else {
            l
        });
    }
    let mut steps = progression_segments(app, v.state);
    if let Some(first) = steps.first_mut() {
        first.insert(0, Span::raw("  "));
    }
    out.extend(super::wrap_segments(steps, width, 2));
    out
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
        let mut steps = progression_segments(app, Some(VolumeState::Created));
        for s in steps.iter_mut().flatten() {
            s.style = t.dim;
        }
        if let Some(first) = steps.first_mut() {
            first.insert(0, Span::raw("  "));
        }
        for (i, l) in super::wrap_segments(steps, inner.width as usize, 2)
            .iter()
            .enumerate()
        {
            put(buf, inner, 2 + i as u16, l);
        }
        return;
    }
    let h = inner.height as usize;
    let w = inner.width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    // The first line of the row a lesson step is about: its claim's refused node, else
    // the claim's first row.
    let claims = app
        .lesson
        .as_ref()
        .and_then(|l| l.focus.as_ref())
        .map(|f| lab_engine::dash::focus_claims(&app.desk.lab, f))
        .unwrap_or_default();
    let (mut first_row, mut refused_row, mut lit_row) = (None, None, None);
    for v in &rows {
        if claims.contains(&v.pvc) {
            first_row.get_or_insert(lines.len());
            if v.multi_attach.is_some() {
                refused_row.get_or_insert(lines.len());
            }
        }
        if lit(app, v) != Lit::No {
            lit_row.get_or_insert(lines.len());
        }
        lines.extend(row_lines(app, v, w));
    }
    let mut skip = app.ui.scroll[Pane::Volumes.index()];
    if let Some(at) = lit_row.or(refused_row).or(first_row)
        && !(skip..skip + h).contains(&at)
    {
        skip = at;
    }
    let skip = skip.min(lines.len().saturating_sub(h));
    for (y, line) in lines.iter().skip(skip).take(h).enumerate() {
        put(buf, inner, y as u16, line);
    }
    super::more_cue(app, area, skip, lines.len().saturating_sub(skip + h), buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lab;

    #[test]
    fn paths_keep_the_part_that_differs() {
        let staging = "/var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.lab/f96be2833a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d/globalmount";
        assert_eq!(short_path(staging, 200), staging);
        assert_eq!(
            short_path(staging, 60),
            "…/kubernetes.io/csi/hostpath.csi.lab/f96be283…/globalmount"
        );
        let target = "/var/lib/kubelet/pods/45f8bc99-1234-5678-9abc-def012345678/volumes/kubernetes.io~csi/pvc-76511f8b-8bbc-80b0-5e67-66115a7b4b04/mount";
        assert_eq!(
            short_path(target, 60),
            "…/45f8bc99…/volumes/kubernetes.io~csi/pvc-76511f8b…/mount"
        );
        assert_eq!(short_path(target, 40), "…/45f8bc99…/…/pvc-76511f8b…/mount");
    }
    use crate::Theme;

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
            state: Some(VolumeState::VolReady),
            multi_attach: None,
        };
        let lines = row_lines(&app, &v, 200);
        let [a, b, p, c] = &lines[..] else {
            panic!("{lines:?}");
        };
        let text = |l: &Line| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        };
        assert_eq!(
            text(a),
            "default/data → pvc-1a2b → vol-0001 → csi-9f8e @node-1"
        );
        assert!(
            text(b).starts_with("  staging /var/lib/kubelet/"),
            "{}",
            text(b)
        );
        assert_eq!(text(p), "  publish —");
        assert_eq!(
            text(c),
            "  ● CREATED ━ ● NODE_READY ━ ◉ VOL_READY ━ ○ PUBLISHED"
        );
        // Reached states are styled as done, the rest dim.
        assert_eq!(c.spans[1].style, app.theme.step_done);
        assert_eq!(c.spans[7].style, app.theme.dim);
    }
}
