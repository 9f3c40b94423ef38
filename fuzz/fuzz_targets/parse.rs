//! Fuzz the command parser: `strip_comment`, `split` and `parse` on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines().take(64) {
        let line = lab_engine::command::strip_comment(line);
        let _ = lab_engine::command::split(line);
        let _ = lab_engine::command::parse(line);
    }
});
