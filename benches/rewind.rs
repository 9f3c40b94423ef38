//! Rewinding a long session (issue 39): a 10,000-command session on the default cluster
//! (5,000 pod creates spread over both nodes, each followed by the delete of the pod made 30
//! commands before, a tick every 25th create), then `rewind N` to 100 seeded random events,
//! and `rewind --undo` back. The session is built outside the measurement.
//!
//! - `rewind/random_100`: one iteration is the 100 rewinds (each: the nearest snapshot is
//!   copied and fewer than `SNAPSHOT_EVERY` commands replayed) and one undo.
//! - Before measuring it prints the time the session took, the slowest of the 100 rewinds
//!   and the time one copy of the lab takes. The heap the snapshots take is
//!   `examples/rewind_memory.rs`'s (this bench keeps the binary's allocator).
//!
//! Run: `cargo bench --bench rewind -- --warm-up-time 1 --measurement-time 10`.

use criterion::{Criterion, criterion_group, criterion_main};
use lab_engine::Lab;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/rewind_session.rs"]
mod rewind_session;
use rewind_session::{COMMANDS, session};

/// 100 events, seeded (a linear congruential generator: the same points every run).
fn points(events: u64) -> Vec<u64> {
    let mut x: u64 = 39;
    (0..100)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % (events + 1)
        })
        .collect()
}

fn bench_rewind(c: &mut Criterion) {
    let mut lab = Lab::new();
    let started = Instant::now();
    for line in session() {
        lab.execute(&line).expect("a session line");
    }
    let built = started.elapsed();
    let events = lab.journal().entries.len() as u64;
    assert_eq!(events, COMMANDS as u64, "every command is an event");
    let t = Instant::now();
    let copy = black_box(lab.clone());
    let clone_time = t.elapsed();
    drop(copy);
    let points = points(events);
    let mut slowest = Duration::ZERO;
    for n in &points {
        let t = Instant::now();
        lab.execute(&format!("rewind {n}")).expect("rewind");
        slowest = slowest.max(t.elapsed());
    }
    lab.execute("rewind --undo").expect("undo");
    println!(
        "session: {COMMANDS} commands in {built:.2?} ({:.1} µs a command); one copy of the lab in {clone_time:.2?}; slowest of 100 rewinds {slowest:.2?}",
        built.as_secs_f64() * 1e6 / COMMANDS as f64,
    );
    c.bench_function("rewind/random_100", |b| {
        b.iter(|| {
            for n in &points {
                black_box(lab.execute(&format!("rewind {n}")).expect("rewind"));
            }
            lab.execute("rewind --undo").expect("undo");
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_rewind
}
criterion_main!(benches);
