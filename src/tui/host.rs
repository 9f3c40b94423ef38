//! The terminal's side of the dashboard: crossterm's keys as the dashboard's, `csi serve`
//! on a unix socket (its calls run on every tick), and path words completed from the disk.

use crate::csi_serve::{self, NOT_SERVING, ServeRequest, Server};
use lab_engine::Lab;
use lab_engine::render::Line;
use lab_ui::host::Host;
use lab_ui::key::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// The dashboard's host on a terminal: the driver it serves, if any. Dropping it stops
/// serving and removes the socket.
#[derive(Default)]
pub struct Native {
    serving: Option<Server>,
}

impl Native {
    /// `csi serve`, `csi serve stop` and `csi serve status` in the dashboard.
    fn serve_control(&mut self, lab: &Lab, req: ServeRequest) -> Result<String, String> {
        match req {
            ServeRequest::Status => Ok(self
                .serving
                .as_ref()
                .map_or_else(|| NOT_SERVING.to_string(), Server::banner)),
            ServeRequest::Stop => {
                let server = self.serving.take().ok_or(NOT_SERVING)?;
                server.stop()
            }
            ServeRequest::Start(opts) => {
                if let Some(s) = &self.serving {
                    return Err(csi_serve::already_serving(&s.socket));
                }
                let server = Server::start(lab, &opts)?;
                let said = format!(
                    "{}; calls show here as they arrive, `csi serve stop` stops it",
                    server.banner()
                );
                self.serving = Some(server);
                Ok(said)
            }
        }
    }
}

impl Host for Native {
    fn control(&mut self, lab: &Lab, line: &str) -> Option<Result<String, String>> {
        let req = csi_serve::serve_request(line)?;
        Some(self.serve_control(lab, req))
    }

    fn tick(&mut self, lab: &mut Lab) -> Vec<Line> {
        let Some(server) = &self.serving else {
            return Vec::new();
        };
        let mut jobs = Vec::new();
        while let Some(job) = server.try_job() {
            jobs.push(job);
        }
        let node = server.node.clone();
        jobs.into_iter()
            .flat_map(|job| csi_serve::handle(lab, node.as_deref(), job))
            .collect()
    }

    fn path_candidates(&self, prefix: &str) -> Vec<String> {
        crate::files::path_candidates(prefix)
    }
}

/// A crossterm key as the dashboard's; `None` for keys it has no name for (Insert, media
/// keys, lone modifiers …), which no binding uses.
pub(super) fn key(k: &crossterm::event::KeyEvent) -> Option<KeyEvent> {
    use crossterm::event::{KeyCode as C, KeyEventKind as K, KeyModifiers as M};
    let code = match k.code {
        C::Char(c) => KeyCode::Char(c),
        C::F(n) => KeyCode::F(n),
        C::Enter => KeyCode::Enter,
        C::Esc => KeyCode::Esc,
        C::Tab => KeyCode::Tab,
        C::BackTab => KeyCode::BackTab,
        C::Backspace => KeyCode::Backspace,
        C::Delete => KeyCode::Delete,
        C::Up => KeyCode::Up,
        C::Down => KeyCode::Down,
        C::Left => KeyCode::Left,
        C::Right => KeyCode::Right,
        C::Home => KeyCode::Home,
        C::End => KeyCode::End,
        C::PageUp => KeyCode::PageUp,
        C::PageDown => KeyCode::PageDown,
        _ => return None,
    };
    let mut modifiers = KeyModifiers::NONE;
    for (theirs, ours) in [
        (M::SHIFT, KeyModifiers::SHIFT),
        (M::CONTROL, KeyModifiers::CONTROL),
        (M::ALT, KeyModifiers::ALT),
        (M::SUPER | M::HYPER | M::META, KeyModifiers::SUPER),
    ] {
        if k.modifiers.intersects(theirs) {
            modifiers = modifiers | ours;
        }
    }
    let kind = match k.kind {
        K::Press => KeyEventKind::Press,
        K::Repeat => KeyEventKind::Repeat,
        K::Release => KeyEventKind::Release,
    };
    Some(KeyEvent {
        code,
        modifiers,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_ui::complete::complete;

    #[test]
    fn paths_complete_from_the_file_system() {
        let lab = Lab::new();
        let disk = Native::default();
        let line = "apply -f assets/manif";
        assert_eq!(
            complete(&lab, &[], line, &disk).apply(line).as_deref(),
            Some("apply -f assets/manifests/")
        );
        let c = complete(&lab, &[], "apply -f assets/manifests/web", &disk).candidates;
        assert_eq!(c, ["assets/manifests/web-app.yaml"]);
        assert!(
            complete(&lab, &[], "apply -f nothing-here/x", &disk)
                .candidates
                .is_empty()
        );
    }

    #[test]
    fn crossterm_keys_keep_their_modifiers() {
        use crossterm::event::{KeyCode as C, KeyEvent as E, KeyModifiers as M};
        let k = key(&E::new(C::Char('3'), M::ALT)).unwrap();
        assert_eq!(k, KeyEvent::new(KeyCode::Char('3'), KeyModifiers::ALT));
        let k = key(&E::new(C::Char('d'), M::SUPER)).unwrap();
        assert!(k.modifiers.contains(KeyModifiers::SUPER));
        assert_eq!(key(&E::new(C::Insert, M::NONE)), None);
    }
}
