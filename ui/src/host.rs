//! What the front end running the dashboard adds to it: commands that need the machine the
//! lab runs on (`csi serve` holds a unix socket open), work that arrives from outside
//! between keys (the calls on that socket), and the file names a path word completes to.
//! The terminal front end serves and reads the disk; a browser has no socket and offers
//! what the learner uploaded.

use lab_engine::Lab;
use lab_engine::render::Line;

/// The front end's side of the dashboard.
pub trait Host {
    /// A command line the front end handles itself (natively `csi serve`, `csi serve stop`
    /// and `csi serve status`): what it said, or why it was refused. `None` for every other
    /// line, which runs through `Desk::execute`.
    fn control(&mut self, lab: &Lab, line: &str) -> Option<Result<String, String>>;

    /// Run on the lab what arrived since the last tick (calls on `csi serve`'s socket): the
    /// lines to show, none when nothing arrived.
    fn tick(&mut self, lab: &mut Lab) -> Vec<Line>;

    /// The file names that complete `prefix` (a path word: `apply -f`, `cni conf load`).
    fn path_candidates(&self, prefix: &str) -> Vec<String>;
}

/// No commands of its own, nothing from outside, no files: every line goes to the engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHost;

impl Host for NoHost {
    fn control(&mut self, _: &Lab, _: &str) -> Option<Result<String, String>> {
        None
    }

    fn tick(&mut self, _: &mut Lab) -> Vec<Line> {
        Vec::new()
    }

    fn path_candidates(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
}
