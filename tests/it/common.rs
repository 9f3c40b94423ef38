//! Small helpers the scenario tests share: run a line and get its text, and read a pod of
//! the default namespace back.
#![allow(dead_code)] // each test crate uses its own subset

use lab_engine::engine::Lab;

/// Run one command line; its output as text (a rejected line fails the test, naming it).
pub fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

/// The store key of an object in the default namespace.
pub fn key(name: &str) -> (String, String) {
    ("default".to_string(), name.to_string())
}

/// A pod's phase.
pub fn phase(lab: &Lab, pod: &str) -> String {
    lab.cluster().pods[&key(pod)].status.phase.to_string()
}

/// What the terminal front ends give a lab: the disk (and no real mode).
pub fn disk() -> lab_engine::edge::Edges {
    lab_engine::edge::Edges::files(std::sync::Arc::new(cni_csi_lab::files::Disk))
}

/// A lessons directory on disk, as `--lessons DIR` gives it.
pub fn lessons_at(
    dir: impl AsRef<std::path::Path>,
) -> std::sync::Arc<dyn lab_engine::lesson::catalog::LessonDir> {
    std::sync::Arc::new(cni_csi_lab::lesson_dir::Dir(dir.as_ref().to_path_buf()))
}

/// The default lab as a terminal front end builds it (with the disk).
pub fn lab() -> lab_engine::Lab {
    lab_engine::Lab::with_edges(lab_engine::Lab::new, disk())
}

/// An empty lab as a terminal front end builds it (with the disk).
pub fn empty_lab() -> lab_engine::Lab {
    lab_engine::Lab::with_edges(lab_engine::Lab::empty, disk())
}

/// The default desk as a terminal front end builds it (with the disk).
pub fn desk() -> lab_engine::Desk {
    lab_engine::Desk::with_lab(lab())
}

/// The dashboard's test harness the TestBackend tests share: an app at a size, scripted
/// keys through the real event loop, and reading the drawn screen back.
pub mod dash {
    use cni_csi_lab::Lab;
    use cni_csi_lab::tui::{self, App, ScriptedEvents, Theme};
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;

    /// A dashboard on `lab`, sized `size`.
    pub fn app(lab: Lab, size: (u16, u16)) -> App {
        let mut a = App::new(lab, Theme::standard());
        a.update(tui::Action::Resize(size.0, size.1));
        a
    }

    /// A key press with no modifier.
    pub fn key(code: KeyCode) -> Event {
        Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    /// Run the real event loop over scripted events, then draw the final state. (The
    /// script ends with a shutdown, which quits; the flag is cleared first so a test can
    /// drive again.)
    pub fn drive(a: &mut App, size: (u16, u16), events: Vec<Event>) -> Terminal<TestBackend> {
        a.ui.quit = false;
        let mut t = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
        let mut src = ScriptedEvents(events.into());
        tui::run_loop(&mut t, a, &mut src).unwrap();
        tui::draw(&mut t, a).unwrap();
        t
    }

    /// The screen's characters, a line per row.
    pub fn screen_text(buf: &Buffer) -> String {
        let mut s = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                s.push_str(buf[(x, y)].symbol());
            }
            s.push('\n');
        }
        s
    }

    /// The first cell where `needle` starts on screen.
    pub fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
        let text = screen_text(buf);
        for (y, line) in text.lines().enumerate() {
            let chars: Vec<char> = line.chars().collect();
            let n: Vec<char> = needle.chars().collect();
            if let Some(x) = chars.windows(n.len()).position(|w| w == n.as_slice()) {
                return Some((x as u16, y as u16));
            }
        }
        None
    }
}
