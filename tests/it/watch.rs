//! `get -w` in a front end (issue 37 §4): in the REPL, on a pseudo-terminal, the watch
//! streams each later command's changes under it until Ctrl-C ends it (the terminal shows
//! `^C`, as it would after kubectl's watch), and that Ctrl-C does not count towards the two
//! that quit. The dashboard's side (Esc, the footer's hint) is in `tui`; what prints is in
//! the golden transcript `tests/transcripts/watch.lab`.

use crate::paste::{Session, skip};
use std::io::Write;

/// The REPL: `get pods -w`, a label streams a row; Ctrl-C ends the watch with `^C`; the
/// next label streams nothing; the session goes on.
#[test]
fn repl_ctrl_c_ends_the_watch() {
    if skip("repl_ctrl_c_ends_the_watch") {
        return;
    }
    let mut s = Session::start(&["repl"]);
    s.wait_for("prompt", 0, |t| {
        t.contains("Ctrl-D quits") && t.contains("]> ")
    });
    let typed = |s: &mut Session, line: &[u8]| {
        let stdin = s.stdin.as_mut().expect("stdin");
        stdin.write_all(line).expect("typed");
        stdin.flush().expect("flushed");
    };
    typed(&mut s, b"pod create api\r");
    s.wait_for("the pod", 0, |t| t.contains("phase=Running"));
    let mark = s.len();
    typed(&mut s, b"get pods -w\r");
    s.wait_for("the first listing", mark, |t| {
        t.contains("api    1/1     Running")
    });
    let mark = s.len();
    typed(&mut s, b"label pod api tier=a\r");
    // The row, then the prompt back: Ctrl-C is typed to the line editor (typed while the
    // command still prints, the terminal itself would echo it and the REPL never see it).
    s.wait_for("the streamed row and the prompt", mark, |t| {
        t.find(" labeled").is_some_and(|i| {
            t[i..]
                .find("api    1/1     Running")
                .is_some_and(|j| t[i + j..].contains("]> "))
        })
    });
    let pause = || std::thread::sleep(std::time::Duration::from_millis(200));
    let mark = s.len();
    typed(&mut s, b"\x03");
    s.wait_for("^C", mark, |t| t.contains("^C"));
    pause();
    let mark = s.len();
    typed(&mut s, b"label pod api tier=b --overwrite\r");
    s.wait_for("the label", mark, |t| t.contains(" labeled"));
    pause();
    typed(&mut s, b"echo after-the-watch\r");
    s.wait_for("the next command", mark, |t| {
        t.contains("\nafter-the-watch")
    });
    let shown = s.text();
    let after = &shown[mark..];
    assert!(
        !after.contains("api    1/1"),
        "the watch streamed after Ctrl-C ended it: {after:?}"
    );
    // That Ctrl-C ended the watch; one more on an empty prompt does not quit yet.
    pause();
    typed(&mut s, b"\x03");
    pause();
    let mark = s.len();
    typed(&mut s, b"echo still-here\r");
    s.wait_for("the session going on", mark, |t| t.contains("\nstill-here"));
    pause();
    typed(&mut s, b"quit\r");
    s.wait_exit();
}
