//! Scripts: parsing a 100,000-line script (`command::parse` on every logical line, the
//! command language's one clap tree) and running one (`script::run`, the path of
//! `cni-csi-lab run FILE`: execute, render every outcome as plain text, write it out).
//!
//! - `script_parse/100000_lines`: a generated mix of the commands a lesson uses (pod create
//!   with labels and ports, pod delete, get, show, describe, node list, reach, comments).
//! - `script_run/10000_lines`: 5,000 pod creates then 5,000 pod deletes on 40 nodes, with
//!   the output written to a sink. The lab is built outside the measurement.
//!
//! Run: `cargo bench --bench script -- --warm-up-time 1 --measurement-time 3`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lab_engine::command;
use lab_engine::script::{self, RunOptions, logical_lines};
use lab_engine::{Desk, Lab};
use std::hint::black_box;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODES: usize = 40;

/// A script of `lines` lines cycling through ten kinds of line.
fn parse_script(lines: usize) -> String {
    let mut s = String::with_capacity(lines * 48);
    for i in 0..lines {
        let node = i % NODES;
        let line = match i % 10 {
            0 => format!("pod create web-{i} --node n{node} --label app=web --label tier=front"),
            1 => format!("pod create db-{i} --node n{node} -p 5432:5432/tcp"),
            2 => "get pods -o wide".to_string(),
            3 => format!("show ipam n{node}"),
            4 => format!("describe pod web-{}", i - 4),
            5 => "# a comment line: skipped by the parser".to_string(),
            6 => format!("reach web-{} db-{} --port 5432", i - 6, i - 5),
            7 => "node list".to_string(),
            8 => format!("pod delete web-{}", i - 8),
            _ => format!("pod delete db-{}", i - 8),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// `pods` creates spread over the nodes, then the same pods deleted.
fn run_script(pods: usize) -> String {
    let mut s = String::new();
    for i in 0..pods {
        s.push_str(&format!("pod create p{i} --node n{}\n", i % NODES));
    }
    for i in 0..pods {
        s.push_str(&format!("pod delete p{i}\n"));
    }
    s
}

fn desk() -> Desk {
    let mut lab = Lab::empty();
    for i in 0..NODES {
        lab.execute(&format!(
            "node add n{i} --cidr 10.1.{i}.0/24 --ip 192.168.0.{}",
            i + 1
        ))
        .expect("node add");
    }
    Desk::with_lab(lab)
}

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("script_parse");
    group.sample_size(10);
    let text = parse_script(100_000);
    let lines = logical_lines(&text);
    // Every generated line must parse: a bench of error paths would measure the wrong thing.
    for (no, line) in &lines {
        if let Err(e) = command::parse(command::strip_comment(line)) {
            panic!("line {no} `{line}` does not parse: {e:?}");
        }
    }
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("100000_lines", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for (_, line) in logical_lines(&text) {
                if let Ok(Some(cmd)) = command::parse(command::strip_comment(&line)) {
                    black_box(cmd);
                    n += 1;
                }
            }
            n
        })
    });
    group.finish();
}

fn bench_run(c: &mut Criterion) {
    let mut group = c.benchmark_group("script_run");
    group.sample_size(10);
    let text = run_script(5_000);
    group.throughput(Throughput::Elements(10_000));
    group.bench_function("10000_lines", |b| {
        b.iter_batched(
            desk,
            |mut desk| {
                let ok = script::run(
                    &mut desk,
                    &text,
                    RunOptions::default(),
                    &mut std::io::sink(),
                    &mut std::io::sink(),
                )
                .expect("sink writes cannot fail");
                assert!(ok, "the generated script runs cleanly");
                desk
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_parse, bench_run);
criterion_main!(benches);
