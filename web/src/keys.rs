//! The browser's keys as the dashboard's: ratzilla's key events into `lab_ui::key`.

use lab_ui::key::{KeyCode, KeyEvent, KeyModifiers};
use ratzilla::event::{KeyCode as K, KeyEvent as Web};

/// A key pressed in the page; `None` for keys the dashboard has no name for.
pub(crate) fn key(e: &Web) -> Option<KeyEvent> {
    let code = match e.code {
        K::Char(c) => KeyCode::Char(c),
        K::F(n) => KeyCode::F(n),
        K::Backspace => KeyCode::Backspace,
        K::Enter => KeyCode::Enter,
        K::Left => KeyCode::Left,
        K::Right => KeyCode::Right,
        K::Up => KeyCode::Up,
        K::Down => KeyCode::Down,
        K::Tab if e.shift => KeyCode::BackTab,
        K::Tab => KeyCode::Tab,
        K::Delete => KeyCode::Delete,
        K::Home => KeyCode::Home,
        K::End => KeyCode::End,
        K::PageUp => KeyCode::PageUp,
        K::PageDown => KeyCode::PageDown,
        K::Esc => KeyCode::Esc,
        K::Unidentified => return None,
    };
    let mut modifiers = KeyModifiers::NONE;
    for (held, m) in [
        (e.shift, KeyModifiers::SHIFT),
        (e.ctrl, KeyModifiers::CONTROL),
        (e.alt, KeyModifiers::ALT),
    ] {
        if held {
            modifiers = modifiers | m;
        }
    }
    Some(KeyEvent::new(code, modifiers))
}
