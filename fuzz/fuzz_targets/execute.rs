//! Fuzz `Desk::execute` (the lab and its lessons, as every front end runs lines): arbitrary
//! bytes, read as lossy UTF-8 and split into lines, run on a fresh default lab. Errors are fine; a panic or a hang is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut desk = lab_engine::Desk::new();
    // A bounded number of lines per input keeps each run short.
    for line in text.lines().take(64) {
        // `lesson verify`/`play` replay every lesson: far too slow for one fuzz input.
        if line.trim_start().starts_with("lesson") {
            continue;
        }
        let _ = desk.execute(line);
    }
});
