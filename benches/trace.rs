//! The packet walker on `--preset dc-1000` (1,000 nodes, each holding the routes flanneld
//! programmed for its segment's peers): one `trace` and one `reach` between pods on two
//! nodes, through `Lab::execute` as a learner types them; and building the preset itself
//! (1,000 `node add` lines, every node's flanneld handed each new lease).
//!
//! Run: `cargo bench --bench trace`.

use criterion::{Criterion, criterion_group, criterion_main};
use lab_engine::presets;
use std::time::Duration;

fn bench_trace(c: &mut Criterion) {
    let mut lab = presets::build("dc-1000", Default::default()).expect("dc-1000");
    lab.execute("pod create a --node node-0001").expect("pod a");
    lab.execute("pod create b --node node-0200").expect("pod b");
    let out = lab.execute("trace a b").expect("trace").to_text();
    assert!(out.contains("delivered to default/b"), "{out}");
    let mut g = c.benchmark_group("dc-1000");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("trace a b (host-gw, two nodes apart)", |b| {
        b.iter(|| lab.execute("trace a b").expect("trace"))
    });
    g.bench_function("reach a b", |b| {
        b.iter(|| lab.execute("reach a b").expect("reach"))
    });
    g.sample_size(10);
    g.bench_function("build the preset", |b| {
        b.iter(|| presets::build("dc-1000", Default::default()).expect("dc-1000"))
    });
    g.finish();
}

criterion_group!(benches, bench_trace);
criterion_main!(benches);
