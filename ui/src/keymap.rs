//! The one keymap: every key the dashboard knows, as data (key, modes, action, description).
//! [`lookup`] turns a key press into an [`Action`]; the footer and the `?`/F1 help overlay
//! are drawn from the same table, so they cannot disagree with what the keys do
//! (gitui's `CommandInfo`, k9s' `KeyAction`, yazi's keymap of command strings).
//!
//! Hotkeys that *do* something in the lab are command strings ([`Action::RunTemplate`]):
//! the dashboard fills in the selection (`{pod}`, `{node}` …) and runs the line through
//! `Desk::execute`, exactly as if it had been typed, and echoes it in the output pane.

use crate::key::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What keys currently act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Keys move focus, select and run hotkeys.
    Normal,
    /// Keys edit the command line (`:`).
    Command,
    /// Keys edit the filter (`/`).
    Filter,
    /// The help overlay is open.
    Help,
}

/// The dashboard's panes, in focus order (Alt-1 … Alt-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pane {
    /// Nodes, bridges, veth pairs and pods.
    Topology,
    /// host-local's store on the selected node.
    Ipam,
    /// Route tables of the selected node and pod.
    Routes,
    /// PVC → PV → attachment → staging → publish.
    Volumes,
    /// The call log.
    Calls,
    /// The wire records of the selected call.
    Wire,
    /// Command output.
    Output,
    /// The running lesson.
    Lesson,
}

impl Pane {
    /// Every pane, in focus order.
    pub const ALL: [Pane; 8] = [
        Pane::Topology,
        Pane::Ipam,
        Pane::Routes,
        Pane::Volumes,
        Pane::Calls,
        Pane::Wire,
        Pane::Output,
        Pane::Lesson,
    ];

    /// Position in [`Pane::ALL`].
    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    /// The pane's title.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Topology => "Topology",
            Pane::Ipam => "IPAM",
            Pane::Routes => "Routes",
            Pane::Volumes => "Volumes",
            Pane::Calls => "Calls",
            Pane::Wire => "Wire",
            Pane::Output => "Output",
            Pane::Lesson => "Lesson",
        }
    }
}

/// A line-editing operation on the command line or the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Insert a character at the cursor.
    Insert(char),
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the character under the cursor.
    Delete,
    /// Cursor one character left.
    Left,
    /// Cursor one character right.
    Right,
    /// Cursor to the start.
    Home,
    /// Cursor to the end.
    End,
    /// Delete the whole line.
    Clear,
    /// Delete the word before the cursor.
    DeleteWord,
}

/// Everything that can happen in the dashboard (C3's `Action`). Only [`Action::Run`]
/// touches the lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Run a command line through `Desk::execute`.
    Run(String),
    /// Run a command line after filling in the selection: `{node}`, `{next_node}`,
    /// `{prev_node}`, `{pod}`, `{pod_ns}`, `{wire}`, `{prev_event}`, `{next_event}` (the
    /// timeline's neighbours of the current event).
    RunTemplate(&'static str),
    /// Focus the command line.
    OpenPrompt,
    /// Focus the filter.
    OpenFilter,
    /// Run the command line (or keep the filter).
    Submit,
    /// Enter on a selected row: describe it (a `:KIND` listing's row, Topology's pod).
    Open,
    /// Complete the word under the cursor.
    Complete,
    /// Walk the command history (−1 older, +1 newer).
    History(i32),
    /// Edit the command line or filter.
    Edit(Edit),
    /// Insert pasted text.
    Paste(String),
    /// Move the selection of the focused pane.
    Select(i32),
    /// Move by pages in the focused pane.
    Page(i32),
    /// Scroll the output pane by pages (from the command line).
    PageOutput(i32),
    /// To the top of the focused pane.
    Home,
    /// To the bottom (and follow new entries).
    End,
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Focus the n-th visible pane (0-based).
    FocusNth(usize),
    /// Mouse wheel over a screen position (column, row, lines).
    ScrollAt(u16, u16, i32),
    /// Mouse click: focus the pane there.
    ClickAt(u16, u16),
    /// Show or hide the help overlay.
    ToggleHelp,
    /// Show or hide the lesson hint.
    ToggleHint,
    /// Go back: close the overlay, leave the prompt, clear the filter, follow the log again.
    Back,
    /// The terminal was resized.
    Resize(u16, u16),
    /// Time passed (flash messages fade).
    Tick,
    /// Leave the dashboard.
    Quit,
    /// Ctrl-D: end of input, as in a shell: quit on an empty command line (or outside it);
    /// on a line with text, delete the character under the cursor.
    EndOfInput,
    /// `q` among the keys: the prompt opens with `quit` typed, so Enter quits and Esc stays.
    OfferQuit,
    /// A printable key that is no hotkey: the prompt opens with it typed.
    TypeAhead(char),
    /// Move through a stepped trace: +1 the next hop (`step`), −1 the one before (`step
    /// back`).
    StepHop(i32),
}

/// How a binding matches keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPat {
    /// One key with exactly these modifiers (Shift is ignored for characters).
    Key(KeyCode, KeyModifiers),
    /// Alt with a digit 1–9.
    AltDigit,
    /// Not a key (documented only, e.g. the mouse wheel).
    None,
}

/// Which part of the help overlay a binding is listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Always available.
    General,
    /// Moving around.
    Navigation,
    /// Command strings run in the lab.
    Hotkeys,
    /// The command line and filter.
    Editing,
}

impl Section {
    /// The heading in the help overlay.
    pub fn heading(self) -> &'static str {
        match self {
            Section::General => "GENERAL",
            Section::Navigation => "NAVIGATION",
            Section::Hotkeys => "HOTKEYS (run as commands)",
            Section::Editing => "COMMAND LINE",
        }
    }
}

/// One row of the keymap.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The keys that trigger it.
    pub keys: &'static [KeyPat],
    /// How the keys are written in the footer and help.
    pub label: &'static str,
    /// The modes it applies in.
    pub modes: &'static [Mode],
    /// What it does.
    pub action: Action,
    /// One line for the help overlay.
    pub desc: &'static str,
    /// A word or two for the footer; `None` keeps it out of the footer.
    pub short: Option<&'static str>,
    /// Help section.
    pub section: Section,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const N: &[Mode] = &[Mode::Normal];
const NH: &[Mode] = &[Mode::Normal, Mode::Help];
const C: &[Mode] = &[Mode::Command];
const CF: &[Mode] = &[Mode::Command, Mode::Filter];
const ALL: &[Mode] = &[Mode::Normal, Mode::Command, Mode::Filter, Mode::Help];

const fn k(c: char) -> KeyPat {
    KeyPat::Key(KeyCode::Char(c), NONE)
}

/// The keymap. Order matters only for the footer and the help overlay.
pub static KEYMAP: &[Binding] = &[
    // General
    Binding {
        keys: &[
            KeyPat::Key(KeyCode::Char('c'), CTRL),
            KeyPat::Key(KeyCode::F(10), NONE),
        ],
        label: "Ctrl-C",
        modes: ALL,
        action: Action::Quit,
        desc: "quit (also F10, or the command `quit`)",
        short: Some("quit"),
        section: Section::General,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Char('d'), CTRL)],
        label: "Ctrl-D",
        modes: ALL,
        action: Action::EndOfInput,
        desc: "quit on an empty command line (as in a shell); else delete under the cursor",
        short: None,
        section: Section::General,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Char('l'), CTRL)],
        label: "Ctrl-L",
        modes: ALL,
        action: Action::RunTemplate("clear"),
        desc: "clear the Output pane (the command `clear`)",
        short: None,
        section: Section::General,
    },
    Binding {
        keys: &[k('q')],
        label: "q",
        modes: N,
        action: Action::OfferQuit,
        desc: "`quit` on the command line: Enter quits, Esc stays",
        short: None,
        section: Section::General,
    },
    Binding {
        keys: &[k('?')],
        label: "?",
        modes: N,
        action: Action::ToggleHelp,
        desc: "this help (also F1)",
        short: Some("help"),
        section: Section::General,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::F(1), NONE)],
        label: "F1",
        modes: ALL,
        action: Action::ToggleHelp,
        desc: "this help, from anywhere",
        short: Some("help"),
        section: Section::General,
    },
    Binding {
        keys: &[k(':')],
        label: ":",
        modes: N,
        action: Action::OpenPrompt,
        desc: "type a command (the same language as the REPL and scripts); `:pods`, `:pvc`, `:no` … list a kind (k9s; `:pods NS` one namespace, `:pods all` every one)",
        short: Some("command"),
        section: Section::General,
    },
    Binding {
        keys: &[k('/')],
        label: "/",
        modes: N,
        action: Action::OpenFilter,
        desc: "filter pods and calls by text",
        short: Some("filter"),
        section: Section::General,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Esc, NONE)],
        label: "Esc",
        modes: ALL,
        action: Action::Back,
        desc: "back: stop a playback (lesson play, play FILE) · stop a `get -w` · close help · leave the prompt · from a describe to its `:KIND` listing, then out of it · clear the filter · follow the log",
        short: Some("back"),
        section: Section::General,
    },
    // Navigation
    Binding {
        keys: &[KeyPat::Key(KeyCode::Left, NONE)],
        label: "←/→",
        modes: N,
        action: Action::StepHop(-1),
        desc: "a stepped trace (`trace … --step`) or CSI flow (`pod create … --step`): the step before / the next (on an empty command line Enter is the next too); Esc stops",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Right, NONE)],
        label: "→",
        modes: N,
        action: Action::StepHop(1),
        desc: "",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Enter, NONE)],
        label: "Enter",
        modes: N,
        action: Action::Open,
        desc: "describe the selected row: a `:KIND` listing's, or Topology's pod (`describe KIND NAME`)",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Tab, NONE)],
        label: "Tab",
        modes: N,
        action: Action::FocusNext,
        desc: "focus the next pane (Shift-Tab: previous)",
        short: Some("pane"),
        section: Section::Navigation,
    },
    Binding {
        keys: &[
            KeyPat::Key(KeyCode::BackTab, NONE),
            KeyPat::Key(KeyCode::BackTab, KeyModifiers::SHIFT),
        ],
        label: "S-Tab",
        modes: N,
        action: Action::FocusPrev,
        desc: "focus the previous pane",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::AltDigit],
        label: "Alt-1…9",
        modes: ALL,
        action: Action::FocusNth(0),
        desc: "focus pane 1…9 (numbered in the titles)",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Down, NONE), k('j')],
        label: "↓/j",
        modes: NH,
        action: Action::Select(1),
        desc: "next pod (Topology) or call (Calls); scroll elsewhere",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Up, NONE), k('k')],
        label: "↑/k",
        modes: NH,
        action: Action::Select(-1),
        desc: "previous pod or call; scroll elsewhere",
        short: Some("select"),
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::PageDown, NONE)],
        label: "PgDn",
        modes: NH,
        action: Action::Page(1),
        desc: "a page down in the focused pane",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::PageUp, NONE)],
        label: "PgUp",
        modes: NH,
        action: Action::Page(-1),
        desc: "a page up in the focused pane",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Home, NONE)],
        label: "Home",
        modes: N,
        action: Action::Home,
        desc: "to the top of the focused pane",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::End, NONE)],
        label: "End",
        modes: N,
        action: Action::End,
        desc: "to the bottom (the call log follows new calls again)",
        short: None,
        section: Section::Navigation,
    },
    Binding {
        keys: &[KeyPat::None],
        label: "wheel",
        modes: N,
        action: Action::Tick,
        desc: "scroll the pane under the mouse; a click focuses it",
        short: None,
        section: Section::Navigation,
    },
    // Hotkeys: command strings
    Binding {
        keys: &[k('[')],
        label: "[",
        modes: N,
        action: Action::RunTemplate("rewind {prev_event}"),
        desc: "timeline: one event back, `rewind N` (every pane follows; a command typed there forks the session)",
        short: Some("rewind"),
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k(']')],
        label: "]",
        modes: N,
        action: Action::RunTemplate("rewind {next_event}"),
        desc: "timeline: one event forward, `rewind N` (to the last event: back at the present)",
        short: Some("forward"),
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('n')],
        label: "n",
        modes: N,
        action: Action::RunTemplate("show ipam {next_node}"),
        desc: "next node: `show ipam NODE` (IPAM and Routes follow)",
        short: Some("next node"),
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('N')],
        label: "N",
        modes: N,
        action: Action::RunTemplate("show ipam {prev_node}"),
        desc: "previous node: `show ipam NODE`",
        short: None,
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('d')],
        label: "d",
        modes: N,
        action: Action::RunTemplate("describe pod {pod} -n {pod_ns}"),
        desc: "describe the selected pod: `describe pod NAME`",
        short: Some("describe"),
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('w')],
        label: "w",
        modes: N,
        action: Action::RunTemplate("show wire {wire}"),
        desc: "wire record of the selected call: `show wire N`",
        short: Some("wire"),
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('r')],
        label: "r",
        modes: N,
        action: Action::RunTemplate("show routes {node}"),
        desc: "routes of the selected node: `show routes NODE`",
        short: None,
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('e')],
        label: "e",
        modes: N,
        action: Action::RunTemplate("show events"),
        desc: "the latest calls as text: `show events`",
        short: None,
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('t')],
        label: "t",
        modes: N,
        action: Action::RunTemplate("tick 10"),
        desc: "advance the clock 10s (retries whose backoff expired run): `tick 10`",
        short: None,
        section: Section::Hotkeys,
    },
    Binding {
        keys: &[k('h')],
        label: "h",
        modes: N,
        action: Action::RunTemplate("hint"),
        desc: "the lesson's next hint: `hint`",
        short: None,
        section: Section::Hotkeys,
    },
    // Command line
    Binding {
        // Ctrl-J is what a newline typed ahead (before raw mode) arrives as; readline
        // treats it as Enter too.
        keys: &[
            KeyPat::Key(KeyCode::Enter, NONE),
            KeyPat::Key(KeyCode::Char('j'), CTRL),
            KeyPat::Key(KeyCode::Char('m'), CTRL),
        ],
        label: "Enter",
        modes: CF,
        action: Action::Submit,
        desc: "run the command (the filter: keep it; a playback with --step: the next command; an empty line while stepping: the next step)",
        short: Some("run"),
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Tab, NONE)],
        label: "Tab",
        modes: C,
        action: Action::Complete,
        desc: "complete the word (commands, flags, node and pod names)",
        short: Some("complete"),
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Up, NONE)],
        label: "↑",
        modes: C,
        action: Action::History(-1),
        desc: "previous command from history",
        short: Some("history"),
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Down, NONE)],
        label: "↓",
        modes: C,
        action: Action::History(1),
        desc: "next command from history",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::PageUp, NONE)],
        label: "PgUp",
        modes: C,
        action: Action::PageOutput(-1),
        desc: "scroll the output up",
        short: Some("scroll"),
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::PageDown, NONE)],
        label: "PgDn",
        modes: C,
        action: Action::PageOutput(1),
        desc: "scroll the output down",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Char('u'), CTRL)],
        label: "Ctrl-U",
        modes: CF,
        action: Action::Edit(Edit::Clear),
        desc: "clear the line",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Char('w'), CTRL)],
        label: "Ctrl-W",
        modes: CF,
        action: Action::Edit(Edit::DeleteWord),
        desc: "delete the word before the cursor",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[
            KeyPat::Key(KeyCode::Char('a'), CTRL),
            KeyPat::Key(KeyCode::Home, NONE),
        ],
        label: "Ctrl-A",
        modes: CF,
        action: Action::Edit(Edit::Home),
        desc: "to the start of the line (also Home)",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[
            KeyPat::Key(KeyCode::Char('e'), CTRL),
            KeyPat::Key(KeyCode::End, NONE),
        ],
        label: "Ctrl-E",
        modes: CF,
        action: Action::Edit(Edit::End),
        desc: "to the end of the line (also End)",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Left, NONE)],
        label: "←/→",
        modes: CF,
        action: Action::Edit(Edit::Left),
        desc: "move the cursor (on an empty line while a trace is stepped: the hop before / the next)",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Right, NONE)],
        label: "→",
        modes: CF,
        action: Action::Edit(Edit::Right),
        desc: "",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Backspace, NONE)],
        label: "Bksp",
        modes: CF,
        action: Action::Edit(Edit::Backspace),
        desc: "",
        short: None,
        section: Section::Editing,
    },
    Binding {
        keys: &[KeyPat::Key(KeyCode::Delete, NONE)],
        label: "Del",
        modes: CF,
        action: Action::Edit(Edit::Delete),
        desc: "",
        short: None,
        section: Section::Editing,
    },
];

fn matches(pat: &KeyPat, key: &KeyEvent) -> bool {
    match *pat {
        KeyPat::Key(code, mods) => {
            let got = if matches!(key.code, KeyCode::Char(_)) {
                key.modifiers - KeyModifiers::SHIFT
            } else {
                key.modifiers
            };
            key.code == code && got == mods
        }
        KeyPat::AltDigit => alt_digit(key).is_some(),
        KeyPat::None => false,
    }
}

/// The pane index of Alt-1 … Alt-9.
fn alt_digit(key: &KeyEvent) -> Option<usize> {
    match key.code {
        KeyCode::Char(c @ '1'..='9') if key.modifiers.contains(KeyModifiers::ALT) => {
            Some(c as usize - '1' as usize)
        }
        _ => None,
    }
}

/// The action a key press means in a mode. Key releases and repeats of non-press kinds are
/// ignored (as the ratatui templates do); printable characters edit the command line or
/// the filter; in the help overlay any other key closes it.
pub fn lookup(mode: Mode, key: &KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    for b in KEYMAP.iter().filter(|b| b.modes.contains(&mode)) {
        if b.keys.iter().any(|pat| matches(pat, key)) {
            return Some(match (&b.action, alt_digit(key)) {
                (Action::FocusNth(_), Some(n)) => Action::FocusNth(n),
                (a, _) => a.clone(),
            });
        }
    }
    match mode {
        Mode::Command | Mode::Filter => match key.code {
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                Some(Action::Edit(Edit::Insert(c)))
            }
            _ => None,
        },
        Mode::Help => Some(Action::Back),
        // Any other printable key starts a command with it: typing never vanishes into
        // the keys mode.
        Mode::Normal => match key.code {
            KeyCode::Char(c)
                if !c.is_whitespace()
                    && !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                Some(Action::TypeAhead(c))
            }
            _ => None,
        },
    }
}

/// The footer entries for a mode: (key label, short description), in table order.
pub fn footer(mode: Mode) -> Vec<(&'static str, &'static str)> {
    let mode = if mode == Mode::Help {
        Mode::Normal
    } else {
        mode
    };
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for b in KEYMAP.iter().filter(|b| b.modes.contains(&mode)) {
        if let Some(s) = b.short
            && !out.iter().any(|(_, d)| *d == s)
        {
            out.push((b.label, s));
        }
    }
    out
}

/// The help overlay's sections: heading, then (key label, description) rows.
pub fn help_sections() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    let order = [
        Section::General,
        Section::Navigation,
        Section::Hotkeys,
        Section::Editing,
    ];
    order
        .iter()
        .map(|s| {
            let rows = KEYMAP
                .iter()
                .filter(|b| b.section == *s && !b.desc.is_empty())
                .map(|b| (b.label, b.desc))
                .collect();
            (s.heading(), rows)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn hotkeys_are_command_strings() {
        assert_eq!(
            lookup(Mode::Normal, &key(KeyCode::Char('d'), NONE)),
            Some(Action::RunTemplate("describe pod {pod} -n {pod_ns}"))
        );
        assert_eq!(
            lookup(Mode::Normal, &key(KeyCode::Char('N'), KeyModifiers::SHIFT)),
            Some(Action::RunTemplate("show ipam {prev_node}"))
        );
    }

    #[test]
    fn the_same_key_means_different_things_per_mode() {
        let tab = key(KeyCode::Tab, NONE);
        assert_eq!(lookup(Mode::Normal, &tab), Some(Action::FocusNext));
        assert_eq!(lookup(Mode::Command, &tab), Some(Action::Complete));
        let d = key(KeyCode::Char('d'), NONE);
        assert_eq!(
            lookup(Mode::Command, &d),
            Some(Action::Edit(Edit::Insert('d')))
        );
        assert_eq!(lookup(Mode::Help, &d), Some(Action::Back));
    }

    #[test]
    fn ctrl_c_and_alt_digits_work_everywhere() {
        for m in [Mode::Normal, Mode::Command, Mode::Filter, Mode::Help] {
            assert_eq!(
                lookup(m, &key(KeyCode::Char('c'), CTRL)),
                Some(Action::Quit)
            );
            assert_eq!(
                lookup(m, &key(KeyCode::Char('3'), KeyModifiers::ALT)),
                Some(Action::FocusNth(2))
            );
        }
    }

    #[test]
    fn releases_are_ignored() {
        let mut e = key(KeyCode::Char('n'), NONE);
        e.kind = KeyEventKind::Release;
        assert_eq!(lookup(Mode::Normal, &e), None);
    }

    #[test]
    fn footer_and_help_come_from_the_table() {
        let f = footer(Mode::Normal);
        assert!(f.contains(&(":", "command")));
        assert!(f.contains(&("d", "describe")));
        assert!(!f.iter().any(|(_, s)| *s == "complete"));
        assert!(footer(Mode::Command).contains(&("Tab", "complete")));
        let help = help_sections();
        assert_eq!(help.len(), 4);
        assert!(
            help[2]
                .1
                .iter()
                .any(|(k, d)| *k == "w" && d.contains("show wire"))
        );
    }

    #[test]
    fn every_key_is_bound_once_per_mode() {
        for m in [Mode::Normal, Mode::Command, Mode::Filter] {
            let mut seen: Vec<KeyPat> = Vec::new();
            for b in KEYMAP.iter().filter(|b| b.modes.contains(&m)) {
                for p in b.keys {
                    if *p != KeyPat::None {
                        assert!(!seen.contains(p), "{p:?} bound twice in {m:?}");
                        seen.push(*p);
                    }
                }
            }
        }
    }
}
