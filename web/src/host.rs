//! The dashboard's host in a browser: no socket to serve on (`csi serve` says so in one
//! line and names the native command), and path words complete to the uploaded files.

use crate::uploads::Uploads;
use lab_engine::Lab;
use lab_engine::command::{Command, grammar::CsiCmd};
use lab_engine::render::Line;
use lab_ui::host::Host;
use std::sync::Arc;

/// Why `csi serve` does not run here.
pub(crate) const NO_SOCKET: &str = "csi serve needs a unix socket, which a browser cannot open: install the lab and run `cni-csi-lab csi serve --socket PATH`";

/// The browser's host.
pub(crate) struct Browser(pub(crate) Arc<Uploads>);

impl Host for Browser {
    fn control(&mut self, _: &Lab, line: &str) -> Option<Result<String, String>> {
        match lab_engine::command::parse(lab_engine::command::strip_comment(line)) {
            Ok(Some(Command::Csi(CsiCmd::Serve { .. }))) => Some(Err(NO_SOCKET.to_string())),
            _ => None,
        }
    }

    fn tick(&mut self, _: &mut Lab) -> Vec<Line> {
        Vec::new()
    }

    fn path_candidates(&self, prefix: &str) -> Vec<String> {
        self.0.names(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_ui::complete::complete;

    #[test]
    fn csi_serve_is_refused_in_one_line_naming_the_native_command() {
        let lab = Lab::new();
        let mut host = Browser(Uploads::shared());
        for line in [
            "csi serve --socket /tmp/csi.sock",
            "csi serve status",
            "csi serve stop",
        ] {
            let said = host.control(&lab, line).expect("handled here");
            assert_eq!(said, Err(NO_SOCKET.to_string()), "{line}");
        }
        assert!(!NO_SOCKET.contains('\n'));
        assert!(NO_SOCKET.contains("cni-csi-lab csi serve --socket PATH"));
        assert_eq!(host.control(&lab, "pod create web --node node-1"), None);
        assert_eq!(host.control(&lab, "csi call GetPluginInfo"), None);
    }

    #[test]
    fn path_words_complete_to_the_uploads() {
        let uploads = Uploads::shared();
        uploads.upload("web-app.yaml", Vec::new());
        let host = Browser(uploads);
        let lab = Lab::new();
        let line = "apply -f web";
        assert_eq!(
            complete(&lab, &[], line, &host).apply(line).as_deref(),
            Some("apply -f web-app.yaml ")
        );
    }
}
