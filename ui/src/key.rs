//! A key press as the dashboard reads it, whatever produced it: the terminal front end
//! converts crossterm's events into these, the browser its `KeyboardEvent`s. The shape is
//! crossterm's (code, modifiers, kind), so the keymap reads as it did.

/// Which key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    /// A printable character.
    Char(char),
    /// A function key, F1 … F12.
    F(u8),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Tab.
    Tab,
    /// Shift-Tab.
    BackTab,
    /// Backspace.
    Backspace,
    /// Delete.
    Delete,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
}

/// The modifier keys held with a key, a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KeyModifiers(u8);

impl KeyModifiers {
    /// No modifier.
    pub const NONE: KeyModifiers = KeyModifiers(0);
    /// Shift.
    pub const SHIFT: KeyModifiers = KeyModifiers(1);
    /// Control.
    pub const CONTROL: KeyModifiers = KeyModifiers(2);
    /// Alt (Option).
    pub const ALT: KeyModifiers = KeyModifiers(4);
    /// Super, Hyper or Meta (the Windows or Command key): no binding uses them.
    pub const SUPER: KeyModifiers = KeyModifiers(8);

    /// Whether every modifier of `other` is held.
    pub const fn contains(self, other: KeyModifiers) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any modifier of `other` is held.
    pub const fn intersects(self, other: KeyModifiers) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for KeyModifiers {
    type Output = KeyModifiers;
    fn bitor(self, rhs: KeyModifiers) -> KeyModifiers {
        KeyModifiers(self.0 | rhs.0)
    }
}

impl std::ops::Sub for KeyModifiers {
    type Output = KeyModifiers;
    fn sub(self, rhs: KeyModifiers) -> KeyModifiers {
        KeyModifiers(self.0 & !rhs.0)
    }
}

/// Pressed, held down (repeating) or let go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyEventKind {
    /// Pressed.
    Press,
    /// Held down and repeating.
    Repeat,
    /// Let go.
    Release,
}

/// One key event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyEvent {
    /// Which key.
    pub code: KeyCode,
    /// The modifiers held with it.
    pub modifiers: KeyModifiers,
    /// Pressed, repeated or released.
    pub kind: KeyEventKind,
}

impl KeyEvent {
    /// A press of `code` with `modifiers`.
    pub const fn new(code: KeyCode, modifiers: KeyModifiers) -> Self {
        KeyEvent {
            code,
            modifiers,
            kind: KeyEventKind::Press,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers_are_a_set() {
        let m = KeyModifiers::CONTROL | KeyModifiers::SHIFT;
        assert!(m.contains(KeyModifiers::CONTROL));
        assert!(!m.contains(KeyModifiers::CONTROL | KeyModifiers::ALT));
        assert!(m.intersects(KeyModifiers::ALT | KeyModifiers::SHIFT));
        assert_eq!(m - KeyModifiers::SHIFT, KeyModifiers::CONTROL);
        assert!(KeyModifiers::NONE.contains(KeyModifiers::NONE));
    }
}
