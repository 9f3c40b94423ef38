//! Live heap of the `dc-1000` preset, counted exactly with dhat: total and per node, and
//! (with `--profile FILE`) dhat's per-allocation-site profile for `dh_view.html`.
//!
//! ```text
//! cargo run --release --example dc_memory [-- --profile /tmp/dhat-dc.json]
//! ```

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let profile = match args.as_slice() {
        [flag, file] if flag == "--profile" => Some(file.clone()),
        [] => None,
        _ => return Err("usage: dc_memory [--profile FILE]".into()),
    };
    let _profiler = match &profile {
        Some(file) => dhat::Profiler::builder().file_name(file).build(),
        None => dhat::Profiler::builder().testing().build(),
    };
    let before = dhat::HeapStats::get();
    let desk = lab_engine::presets::build_desk("dc-1000", Default::default())?;
    let after = dhat::HeapStats::get();
    let live = after.curr_bytes - before.curr_bytes;
    println!(
        "dc-1000: {} live heap bytes ({:.0} per node) in {} blocks; {} allocations, {} bytes allocated while building",
        live,
        live as f64 / 1000.0,
        after.curr_blocks - before.curr_blocks,
        after.total_blocks - before.total_blocks,
        after.total_bytes - before.total_bytes
    );
    drop(desk);
    Ok(())
}
