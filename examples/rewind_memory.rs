//! What rewinding costs in heap (issue 39), counted exactly with dhat: the live heap of a
//! 10,000-command session (benches/rewind.rs's: pod creates over both nodes, each
//! followed by the delete of the pod made 30 commands before, a tick every 25th create)
//! with the snapshots its timeline keeps, and of one more copy of the lab (what one
//! snapshot holds, with the journal's entries, which a snapshot leaves out).
//!
//! ```text
//! cargo run --release --example rewind_memory
//! ```

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[path = "../benches/support/rewind_session.rs"]
mod rewind_session;
use rewind_session::{COMMANDS, session};

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() -> Result<(), String> {
    let _profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get();
    let mut lab = lab_engine::Lab::new();
    for line in session() {
        lab.execute(&line).map_err(|e| e.message)?;
    }
    let session = dhat::HeapStats::get().curr_bytes - before.curr_bytes;
    let before_copy = dhat::HeapStats::get().curr_bytes;
    let copy = lab.clone();
    let one = dhat::HeapStats::get().curr_bytes - before_copy;
    drop(copy);
    println!(
        "{COMMANDS} commands: the lab with its timeline holds {:.1} MiB; one copy of the lab {:.2} MiB",
        mib(session),
        mib(one)
    );
    Ok(())
}
