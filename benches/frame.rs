//! One dashboard frame at 160×48 (and 80×24) with 100,000 pods in the cluster: 400 nodes
//! with /24 podCIDRs, 250 pods each, created through `Lab::execute` like a learner would.
//! The cluster is built once, outside the measured loop (that takes a while).
//!
//! Run: `cargo bench --bench frame`. Target: a frame well under 5 ms. Rendering only
//! formats the visible rows, so the figure does not grow with the number of pods.
//! Set `FRAME_PODS` to change the pod count (e.g. 10000 for a quick run).
//!
//! `FRAME_PRESET=k8s-limits` measures Kubernetes' scale envelope instead (issue 41): the
//! preset's 5,000 nodes, then 150,000 pods (or `FRAME_PODS`) pinned round-robin with
//! `pod create p-N --node node-M`, as `examples/envelope.rs` does. Target: a frame
//! in ≤ 16 ms.

use cni_csi_lab::Lab;
use cni_csi_lab::tui::{self, Action, App, Theme};
use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};

// The same allocator the binary uses.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODES: u32 = 400;

fn big_lab(pods: u32) -> Lab {
    let t0 = Instant::now();
    let mut lab = Lab::empty();
    for i in 0..NODES {
        let (a, b) = (i / 250, i % 250 + 1);
        lab.execute(&format!(
            "node add n{i:03} --cidr 10.{}.{}.0/24 --ip 192.{}.{}.{}",
            a + 1,
            b,
            168 + a,
            b / 250,
            b
        ))
        .expect("node add");
    }
    for p in 0..pods {
        let node = p % NODES;
        lab.execute(&format!("pod create p{p:06} --node n{node:03}"))
            .expect("pod create");
    }
    let (nodes, pods) = lab.counts();
    eprintln!("built {nodes} nodes, {pods} pods in {:.1?}", t0.elapsed());
    lab
}

/// `--preset k8s-limits` (5,000 nodes) with `pods` pods pinned round-robin, node-0001 first.
fn limits_lab(pods: u32) -> Lab {
    let t0 = Instant::now();
    let mut lab =
        lab_engine::presets::build("k8s-limits", Default::default()).expect("preset k8s-limits");
    for p in 0..pods {
        lab.execute(&format!("pod create p-{p} --node node-{:04}", p % 5000 + 1))
            .expect("pod create");
    }
    let (nodes, pods) = lab.counts();
    eprintln!(
        "built k8s-limits: {nodes} nodes, {pods} pods in {:.1?}",
        t0.elapsed()
    );
    lab
}

fn bench_frame(c: &mut Criterion) {
    let limits = match std::env::var("FRAME_PRESET").ok().as_deref() {
        None | Some("") => false,
        Some("k8s-limits") => true,
        Some(other) => panic!("FRAME_PRESET={other}: only k8s-limits is measured"),
    };
    let pods = std::env::var("FRAME_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if limits { 150_000 } else { 100_000 });
    let (lab, mid, pinned_to, size) = if limits {
        (limits_lab(pods), "node-2500", "node-0007", "k8s_limits_")
    } else {
        (big_lab(pods), "n200", "n007", "")
    };
    let mut app = App::new(lab, Theme::standard());
    app.update(Action::Resize(160, 48));
    // A node in the middle, its pods in view, a call selected: a realistic busy screen.
    app.run_command(&format!("show ipam {mid}"));
    app.update(Action::Select(3));
    let mut group = c.benchmark_group("frame");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(5));
    for (w, h) in [(160u16, 48u16), (80, 24)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        app.update(Action::Resize(w, h));
        group.bench_function(format!("{w}x{h}_{size}{pods}_pods"), |b| {
            b.iter(|| {
                // Force a full redraw each time (a fresh frame, not an unchanged diff).
                terminal.clear().expect("clear");
                tui::draw(&mut terminal, &mut app).expect("draw");
            })
        });
    }
    // One command through the dashboard (execute + refresh of the derived view state).
    app.update(Action::Resize(160, 48));
    let mut i = 0u64;
    group.bench_function(format!("command_{size}{pods}_pods"), |b| {
        b.iter(|| {
            i += 1;
            app.run_command(&format!("pod create bench{i} --node {pinned_to}"));
            app.run_command(&format!("pod delete bench{i}"));
        })
    });
    group.finish();
}

criterion_group!(benches, bench_frame);
criterion_main!(benches);
