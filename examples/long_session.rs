//! Issue 41: a million-command session does not grow without limit. The session is
//! `benches/rewind.rs`'s, made as long as asked: pod creates spread over both nodes of the
//! default cluster, each followed by the delete of the pod made 30 commands before, a tick
//! every 25th create, through `Lab::execute` (the path of `run FILE` and the REPL). At each
//! checkpoint it prints the process's VmRSS and what the lab keeps: the call log and the
//! wire log (rings of a fixed size), the timeline's events (one per command that changed
//! the lab: the journal `save` writes and `rewind` replays) and its snapshots (a bounded
//! number, within a bounded weight).
//!
//! ```text
//! cargo run --release --example long_session -- 1000000
//! ```

use lab_engine::Lab;
use std::time::Instant;

#[path = "support/rss.rs"]
mod rss;
use rss::rss_kib;

/// The `i`-th line of the session (0-based), as benches/support/rewind_session.rs makes
/// them, generated one at a time so the session itself takes no memory.
struct Lines {
    k: usize,
    queue: std::collections::VecDeque<String>,
}

impl Iterator for Lines {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        if self.queue.is_empty() {
            let k = self.k;
            self.queue
                .push_back(format!("pod create p{k} --node node-{}", k % 2 + 1));
            self.queue.push_back(if k >= 30 {
                format!("pod delete p{}", k - 30)
            } else {
                "tick 1".to_string()
            });
            if k % 25 == 0 {
                self.queue.push_back("tick 1".to_string());
            }
            self.k += 1;
        }
        self.queue.pop_front()
    }
}

fn main() -> Result<(), String> {
    let total: usize = std::env::args()
        .nth(1)
        .map(|a| {
            a.parse()
                .map_err(|_| format!("not a count of commands: {a}"))
        })
        .transpose()?
        .unwrap_or(1_000_000);
    let mut lab = Lab::new();
    let start = Instant::now();
    let mut checkpoint = 10_000;
    println!(
        "{:>9}  {:>9}  {:>10}  {:>10}  {:>8}  {:>9}  {:>7}",
        "commands", "VmRSS MiB", "call log", "wire log", "events", "snapshots", "s"
    );
    for (i, line) in (Lines {
        k: 0,
        queue: Default::default(),
    })
    .take(total)
    .enumerate()
    {
        lab.execute(&line)
            .map_err(|e| format!("{line}: {}", e.message))?;
        let done = i + 1;
        if done == checkpoint || done == total {
            println!(
                "{done:>9}  {:>9.1}  {:>10}  {:>10}  {:>8}  {:>9}  {:>7.1}",
                rss_kib() as f64 / 1024.0,
                lab.calls().len(),
                lab.wire().len(),
                lab.position().of,
                lab.snapshots_kept(),
                start.elapsed().as_secs_f64()
            );
            checkpoint = (checkpoint * 10).min(total.max(checkpoint));
            if checkpoint == done {
                checkpoint = usize::MAX;
            }
        }
    }
    Ok(())
}
