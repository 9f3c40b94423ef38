//! The dashboard's theme: every style the panes use, by meaning. Three palettes — *dark*
//! (the default: Okabe–Ito colours, distinguishable with the common colour-vision
//! deficiencies, on the terminal's own background), *light* (dark text on white, for a
//! bright room) and *high contrast* (bright colours on black) — and two things that compose
//! with any of them: `--big` (thick borders, a column of padding, blank lines between node
//! boxes, for a projector) and `NO_COLOR` (emphasis by weight, underline and reverse video
//! only; with `--big`, not even dim text, which a washed-out projector loses).
//!
//! Colour never carries meaning alone: errors also get `✗` and bold, warnings `!`, changes a
//! `●` marker, so a screenshot in grey still reads. Labels are never dark grey (ANSI 8):
//! only the borders of unfocused panes are.

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
    /// High contrast on black, thick borders, more spacing (projector).
    Big,
    /// No colour at all (`NO_COLOR`).
    Mono,
    /// Dark text on a white background.
    Light,
    /// Bright colours on black, with the normal spacing.
    HighContrast,
}

/// The palette `--theme` picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Palette {
    /// Colours on the terminal's own (dark) background.
    #[default]
    Dark,
    /// Dark text on white, for a bright room.
    Light,
    /// Bright colours on black.
    HighContrast,
}

impl Palette {
    /// Every palette, with the name `--theme` takes.
    pub const ALL: [(&'static str, Palette); 3] = [
        ("dark", Palette::Dark),
        ("light", Palette::Light),
        ("high-contrast", Palette::HighContrast),
    ];
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
            // Light grey, not dark grey (ANSI 8): labels must read on a projector.
            dim: Style::new().fg(Color::Gray),
            actor: Style::new().fg(REDDISH_PURPLE),
            name: Style::new().add_modifier(Modifier::BOLD),
            json: Style::new().fg(BLUISH_GREEN),
            border: Style::new().fg(Color::DarkGray),
            border_focused: Style::new().fg(YELLOW).add_modifier(Modifier::BOLD),
            border_type: BorderType::Plain,
            border_type_focused: BorderType::Thick,
            // The terminal's own colour, not the dark grey of the border it sits on.
            title: Style::new().fg(Color::Reset).add_modifier(Modifier::BOLD),
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

    /// Dark text on white, for a bright room: the darker Okabe–Ito colours (blue,
    /// vermillion, bluish green, reddish purple), which keep their contrast on white.
    pub fn light() -> Self {
        use okabe_ito::*;
        let base = Style::new().fg(Color::Black).bg(Color::White);
        let grey = Color::Rgb(80, 80, 80);
        let dark_orange = Color::Rgb(160, 80, 0);
        Theme {
            kind: ThemeKind::Light,
            plain: base,
            header: base.add_modifier(Modifier::BOLD),
            good: base.fg(BLUE),
            bad: base.fg(VERMILLION).add_modifier(Modifier::BOLD),
            warn: base.fg(dark_orange).add_modifier(Modifier::BOLD),
            dim: base.fg(grey),
            actor: base.fg(Color::Rgb(150, 60, 110)),
            name: base.add_modifier(Modifier::BOLD),
            json: base.fg(Color::Rgb(0, 110, 80)),
            border: base.fg(Color::Rgb(120, 120, 120)),
            border_focused: base.fg(BLUE).add_modifier(Modifier::BOLD),
            border_type: BorderType::Plain,
            border_type_focused: BorderType::Thick,
            title: base.add_modifier(Modifier::BOLD),
            selected: base.add_modifier(Modifier::REVERSED),
            changed: Style::new()
                .fg(Color::Black)
                .bg(YELLOW)
                .add_modifier(Modifier::BOLD),
            bar: Style::new().fg(Color::White).bg(BLUE),
            key: base.fg(BLUE).add_modifier(Modifier::BOLD),
            prompt: base.fg(BLUE).add_modifier(Modifier::BOLD),
            cursor: base.add_modifier(Modifier::REVERSED),
            step_done: base.fg(Color::Rgb(0, 110, 80)).add_modifier(Modifier::BOLD),
            tab_active: Style::new()
                .fg(Color::White)
                .bg(BLUE)
                .add_modifier(Modifier::BOLD),
            pad: 0,
            airy: false,
        }
    }

    /// Bright colours on black with the normal spacing (the big theme's palette).
    pub fn high_contrast() -> Self {
        let s = Theme::standard();
        Theme {
            kind: ThemeKind::HighContrast,
            border_type: s.border_type,
            border_type_focused: s.border_type_focused,
            pad: s.pad,
            airy: s.airy,
            ..Theme::big()
        }
    }

    /// The theme for these options: `NO_COLOR` (set and non-empty, per no-color.org) wins
    /// over colour; `big` picks the projector theme (kept monochrome under `NO_COLOR`, with
    /// the big theme's spacing and borders).
    pub fn pick(big: bool, no_color: bool) -> Self {
        Theme::build(None, big, no_color)
    }

    /// The theme for a palette (`--theme`; none: dark, or high contrast with `--big`),
    /// `--big` and `NO_COLOR`, each composing with the others: `--big` adds its borders and
    /// spacing to any palette, and under `NO_COLOR` nothing is coloured (nor dim with
    /// `--big`).
    pub fn build(palette: Option<Palette>, big: bool, no_color: bool) -> Self {
        let mut t = match (no_color, palette) {
            (true, _) => Theme::mono(),
            (false, None) if big => Theme::big(),
            (false, None | Some(Palette::Dark)) => Theme::standard(),
            (false, Some(Palette::Light)) => Theme::light(),
            (false, Some(Palette::HighContrast)) => Theme::high_contrast(),
        };
        if big {
            t.border_type = BorderType::Thick;
            t.border_type_focused = BorderType::Double;
            t.pad = 1;
            t.airy = true;
            if no_color {
                // A washed-out projector loses dim text: secondary text is plain there.
                t.dim = Style::new();
                t.border = Style::new();
            }
        }
        t
    }

    /// The style of an output role.
    pub fn role(&self, role: Role) -> Style {
        match role {
            Role::Plain | Role::Prose | Role::Note => self.plain,
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
    fn big_composes_with_every_palette_and_no_color() {
        for (_, palette) in Palette::ALL {
            let t = Theme::build(Some(palette), true, false);
            assert_eq!(t.border_type, BorderType::Thick);
            assert_eq!((t.pad, t.airy), (1, true));
            let plain = Theme::build(Some(palette), false, false);
            assert_eq!(t.plain, plain.plain, "--big keeps the palette's colours");
            let mono = Theme::build(Some(palette), true, true);
            for s in [mono.dim, mono.border, mono.plain, mono.header, mono.bad] {
                assert_eq!((s.fg, s.bg), (None, None));
                assert!(!s.add_modifier.contains(Modifier::DIM), "{s:?}");
            }
        }
        assert_eq!(
            Theme::build(Some(Palette::Light), false, false).plain.bg,
            Some(Color::White)
        );
    }

    #[test]
    fn errors_and_success_differ_by_more_than_hue() {
        let t = Theme::standard();
        assert_ne!(t.bad.fg, t.good.fg);
        assert!(t.bad.add_modifier.contains(Modifier::BOLD));
        assert!(!t.good.add_modifier.contains(Modifier::BOLD));
    }
}
