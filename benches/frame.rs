//! One dashboard frame at 160×48 (and 80×24) with 100,000 pods in the cluster: 400 nodes
//! with /24 podCIDRs, 250 pods each, created through `Lab::execute` like a learner would.
//! The cluster is built once, outside the measured loop (that takes a while).
//!
//! Run: `cargo bench --bench frame`. Target: a frame well under 5 ms. Rendering only
//! formats the visible rows, so the figure does not grow with the number of pods.
//! Set `FRAME_PODS` to change the pod count (e.g. 10000 for a quick run).

use cni_csi_lab::Lab;
use cni_csi_lab::tui::{self, Action, App, Theme};
use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};

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

fn bench_frame(c: &mut Criterion) {
    let pods = std::env::var("FRAME_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let lab = big_lab(pods);
    let mut app = App::new(lab, Theme::standard());
    app.update(Action::Resize(160, 48));
    // A node in the middle, its pods in view, a call selected: a realistic busy screen.
    app.run_command("show ipam n200");
    app.update(Action::Select(3));
    let mut group = c.benchmark_group("frame");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(5));
    for (w, h) in [(160u16, 48u16), (80, 24)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        app.update(Action::Resize(w, h));
        group.bench_function(format!("{w}x{h}_{pods}_pods"), |b| {
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
    group.bench_function(format!("command_{pods}_pods"), |b| {
        b.iter(|| {
            i += 1;
            app.run_command(&format!("pod create bench{i} --node n007"));
            app.run_command(&format!("pod delete bench{i}"));
        })
    });
    group.finish();
}

criterion_group!(benches, bench_frame);
criterion_main!(benches);
