//! The long session issue 39's rewind figures are measured on, shared by
//! `benches/rewind.rs` (time) and `examples/rewind_memory.rs` (heap): pod creates spread
//! over both nodes of the default cluster, each followed by the delete of the pod made 30
//! commands before (a `tick 1` for the first 30), and a tick every 25th create.

/// How many commands the session has.
pub const COMMANDS: usize = 10_000;

/// The session's lines, [`COMMANDS`] of them.
pub fn session() -> Vec<String> {
    let mut lines = Vec::with_capacity(COMMANDS);
    let mut k = 0;
    while lines.len() < COMMANDS {
        lines.push(format!("pod create p{k} --node node-{}", k % 2 + 1));
        lines.push(if k >= 30 {
            format!("pod delete p{}", k - 30)
        } else {
            "tick 1".to_string()
        });
        if k % 25 == 0 {
            lines.push("tick 1".to_string());
        }
        k += 1;
    }
    lines.truncate(COMMANDS);
    lines
}
