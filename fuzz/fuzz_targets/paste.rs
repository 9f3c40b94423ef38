//! Fuzz pasted input in the dashboard's command line (`tui::App`, the actions its keys
//! and bracketed pastes become): the bytes are read as lossy UTF-8 and typed one character
//! at a time, with a few control bytes standing for keys (CR: Enter, DEL: Backspace, ESC:
//! Esc, ^B: Home, ^V: the next 64 characters as one bracketed paste, ^X: 5,000 `x` typed,
//! a runaway paste). After every action the command line and the filter are at most
//! `MAX_LINE` long; a panic, a hang or a longer line is a bug. Lines that would run a
//! lesson are not entered (`lesson verify`/`play` replay every lesson: too slow here).
#![no_main]

use cni_csi_lab::tui::keymap::Edit;
use cni_csi_lab::tui::{Action, App, Theme};
use lab_engine::command::MAX_LINE;
use libfuzzer_sys::fuzz_target;

fn apply(app: &mut App, action: Action) {
    let mut next = Some(action);
    while let Some(a) = next {
        next = app.update(a);
    }
    assert!(app.ui.prompt.text.len() <= MAX_LINE, "the command line passed MAX_LINE");
    assert!(app.ui.filter.text.len() <= MAX_LINE, "the filter passed MAX_LINE");
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut app = App::new(lab_engine::Lab::new(), Theme::standard());
    apply(&mut app, Action::Resize(100, 30));
    let mut chars = text.chars();
    let mut entered = 0;
    while let Some(c) = chars.next() {
        let action = match c {
            '\r' | '\n' => {
                let line = app.ui.prompt.text.trim_start();
                if line.starts_with("lesson") || entered >= 16 {
                    Action::Back
                } else {
                    entered += 1;
                    Action::Submit
                }
            }
            '\x7f' => Action::Edit(Edit::Backspace),
            '\x1b' => Action::Back,
            '\x02' => Action::Edit(Edit::Home),
            '\x16' => Action::Paste(chars.by_ref().take(64).collect()),
            '\x18' => {
                for _ in 0..5_000 {
                    apply(&mut app, Action::Edit(Edit::Insert('x')));
                }
                continue;
            }
            c => Action::Edit(Edit::Insert(c)),
        };
        apply(&mut app, action);
        if app.should_quit() {
            break;
        }
    }
});
