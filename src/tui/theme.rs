//! The dashboard's one theme: every style the panes use, by meaning. Three variants:
//! the default palette (Okabe–Ito colours, distinguishable with the common colour-vision
//! deficiencies), `--big` (high contrast, thick borders, more spacing, for a projector) and
//! monochrome (`NO_COLOR`: emphasis by weight, underline and reverse video only).
//!
//! Colour never carries meaning alone: errors also get `✗` and bold, warnings `!`, changes a
//! `●` marker, so a screenshot in grey still reads.

use lab_engine::render::Role;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::BorderType;

/// Okabe & Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/).
mod okabe_ito {
    use ratatui::style::Color;
    pub const ORANGE: Color = Color::Rgb(230, 159, 0);
    pub const SKY_BLUE: Color = Color::Rgb(86, 180, 233);
    pub const BLUISH_GREEN: Color = Color::Rgb(0, 158, 115);
    pub const YELLOW: Color = Color::Rgb(240, 228, 66);
    pub const BLUE: Color = Color::Rgb(0, 114, 178);
    pub const VERMILLION: Color = Color::Rgb(213, 94, 0);
    pub const REDDISH_PURPLE: Color = Color::Rgb(204, 121, 167);
}

/// Named styles for every part of the dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Which variant this is.
    pub kind: ThemeKind,
    /// Ordinary text.
    pub plain: Style,
    /// Section titles and table headers.
    pub header: Style,
    /// Success (`Running`, `created`, exit 0).
    pub good: Style,
    /// Failure (`error:`, Warning events, exit ≠ 0).
    pub bad: Style,
    /// Pending or waiting (`ContainerCreating`).
    pub warn: Style,
    /// Secondary detail.
    pub dim: Style,
    /// Who acted (`kubelet(node-1)`).
    pub actor: Style,
    /// Object names.
    pub name: Style,
    /// JSON on the wire.
    pub json: Style,
    /// Borders of panes without focus.
    pub border: Style,
    /// The border of the focused pane.
    pub border_focused: Style,
    /// Border glyphs.
    pub border_type: BorderType,
    /// Border glyphs of the focused pane.
    pub border_type_focused: BorderType,
    /// Pane titles.
    pub title: Style,
    /// The selected row of a list.
    pub selected: Style,
    /// What the last command changed (IPAM rows).
    pub changed: Style,
    /// The title bar across the top.
    pub bar: Style,
    /// Key names in the footer and the help overlay.
    pub key: Style,
    /// The prompt (`lab>`).
    pub prompt: Style,
    /// The software cursor in the command line.
    pub cursor: Style,
    /// A reached step of a lifecycle progression.
    pub step_done: Style,
    /// The active tab in compact layout.
    pub tab_active: Style,
    /// Blank columns inside each pane's border (0 or 1).
    pub pad: u16,
    /// Whether node boxes in the topology get a blank line between them.
    pub airy: bool,
}

/// Which theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeKind {
    /// Colour-blind-safe colours on the terminal's own background.
    Default,
    /// High contrast, thick borders, more spacing (projector).
    Big,
    /// No colour at all (`NO_COLOR`).
    Mono,
}

impl Theme {
    /// The default palette.
    pub fn standard() -> Self {
        use okabe_ito::*;
        Theme {
            kind: ThemeKind::Default,
            plain: Style::new(),
            header: Style::new().add_modifier(Modifier::BOLD),
            good: Style::new().fg(SKY_BLUE),
            bad: Style::new().fg(VERMILLION).add_modifier(Modifier::BOLD),
            warn: Style::new().fg(ORANGE),
            dim: Style::new().fg(Color::DarkGray),
            actor: Style::new().fg(REDDISH_PURPLE),
            name: Style::new().add_modifier(Modifier::BOLD),
            json: Style::new().fg(BLUISH_GREEN),
            border: Style::new().fg(Color::DarkGray),
            border_focused: Style::new().fg(YELLOW).add_modifier(Modifier::BOLD),
            border_type: BorderType::Plain,
            border_type_focused: BorderType::Thick,
            title: Style::new().add_modifier(Modifier::BOLD),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            changed: Style::new()
                .fg(Color::White)
                .bg(BLUE)
                .add_modifier(Modifier::BOLD),
            bar: Style::new().fg(Color::Black).bg(SKY_BLUE),
            key: Style::new().fg(YELLOW).add_modifier(Modifier::BOLD),
            prompt: Style::new().fg(SKY_BLUE).add_modifier(Modifier::BOLD),
            cursor: Style::new().add_modifier(Modifier::REVERSED),
            step_done: Style::new().fg(BLUISH_GREEN).add_modifier(Modifier::BOLD),
            tab_active: Style::new().fg(Color::Black).bg(YELLOW),
            pad: 0,
            airy: false,
        }
    }

    /// High contrast for a projector: bright colours on black, bold everywhere that
    /// matters, thick borders, a column of padding and blank lines between node boxes.
    pub fn big() -> Self {
        use okabe_ito::*;
        let base = Style::new().fg(Color::White).bg(Color::Black);
        Theme {
            kind: ThemeKind::Big,
            plain: base,
            header: base.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            good: base.fg(SKY_BLUE).add_modifier(Modifier::BOLD),
            bad: base.fg(ORANGE).add_modifier(Modifier::BOLD),
            warn: base.fg(YELLOW).add_modifier(Modifier::BOLD),
            dim: base.fg(Color::Gray),
            actor: base.fg(REDDISH_PURPLE).add_modifier(Modifier::BOLD),
            name: base.add_modifier(Modifier::BOLD),
            json: base.fg(BLUISH_GREEN).add_modifier(Modifier::BOLD),
            border: base.fg(Color::Gray),
            border_focused: base.fg(YELLOW).add_modifier(Modifier::BOLD),
            border_type: BorderType::Thick,
            border_type_focused: BorderType::Double,
            title: base.add_modifier(Modifier::BOLD),
            selected: Style::new()
                .fg(Color::Black)
                .bg(Color::White)
                .add_modifier(Modifier::BOLD),
            changed: Style::new()
                .fg(Color::Black)
                .bg(YELLOW)
                .add_modifier(Modifier::BOLD),
            bar: Style::new()
                .fg(Color::Black)
                .bg(Color::White)
                .add_modifier(Modifier::BOLD),
            key: base.fg(YELLOW).add_modifier(Modifier::BOLD),
            prompt: base.fg(YELLOW).add_modifier(Modifier::BOLD),
            cursor: Style::new().fg(Color::Black).bg(Color::White),
            step_done: base.fg(SKY_BLUE).add_modifier(Modifier::BOLD),
            tab_active: Style::new()
                .fg(Color::Black)
                .bg(YELLOW)
                .add_modifier(Modifier::BOLD),
            pad: 1,
            airy: true,
        }
    }

    /// No colour (`NO_COLOR`): meaning by weight, underline and reverse video.
    pub fn mono() -> Self {
        let s = Style::new();
        Theme {
            kind: ThemeKind::Mono,
            plain: s,
            header: s.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            good: s,
            bad: s.add_modifier(Modifier::BOLD),
            warn: s.add_modifier(Modifier::BOLD | Modifier::ITALIC),
            dim: s.add_modifier(Modifier::DIM),
            actor: s.add_modifier(Modifier::ITALIC),
            name: s.add_modifier(Modifier::BOLD),
            json: s,
            border: s.add_modifier(Modifier::DIM),
            border_focused: s.add_modifier(Modifier::BOLD),
            border_type: BorderType::Plain,
            border_type_focused: BorderType::Thick,
            title: s.add_modifier(Modifier::BOLD),
            selected: s.add_modifier(Modifier::REVERSED),
            changed: s.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            bar: s.add_modifier(Modifier::REVERSED),
            key: s.add_modifier(Modifier::BOLD),
            prompt: s.add_modifier(Modifier::BOLD),
            cursor: s.add_modifier(Modifier::REVERSED),
            step_done: s.add_modifier(Modifier::BOLD),
            tab_active: s.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            pad: 0,
            airy: false,
        }
    }

    /// The theme for these options: `NO_COLOR` (set and non-empty, per no-color.org) wins
    /// over colour; `big` picks the projector theme (kept monochrome under `NO_COLOR`, with
    /// the big theme's spacing and borders).
    pub fn pick(big: bool, no_color: bool) -> Self {
        match (big, no_color) {
            (_, true) => {
                let mut t = Theme::mono();
                if big {
                    t.border_type = BorderType::Thick;
                    t.border_type_focused = BorderType::Double;
                    t.pad = 1;
                    t.airy = true;
                }
                t
            }
            (true, false) => Theme::big(),
            (false, false) => Theme::standard(),
        }
    }

    /// The style of an output role.
    pub fn role(&self, role: Role) -> Style {
        match role {
            Role::Plain | Role::Prose => self.plain,
            Role::Header => self.header,
            Role::Good => self.good,
            Role::Bad => self.bad,
            Role::Warn => self.warn,
            Role::Dim => self.dim,
            Role::Actor => self.actor,
            Role::Name => self.name,
            Role::Json => self.json,
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::standard()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_means_no_colour_anywhere() {
        for big in [false, true] {
            let t = Theme::pick(big, true);
            for s in [
                t.plain, t.header, t.good, t.bad, t.warn, t.dim, t.actor, t.name, t.json, t.border,
                t.selected, t.changed, t.bar, t.key,
            ] {
                assert_eq!(s.fg, None, "{s:?}");
                assert_eq!(s.bg, None, "{s:?}");
            }
            assert!(t.bad.add_modifier.contains(Modifier::BOLD));
        }
    }

    #[test]
    fn errors_and_success_differ_by_more_than_hue() {
        let t = Theme::standard();
        assert_ne!(t.bad.fg, t.good.fg);
        assert!(t.bad.add_modifier.contains(Modifier::BOLD));
        assert!(!t.good.add_modifier.contains(Modifier::BOLD));
    }
}
