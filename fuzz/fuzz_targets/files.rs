//! Fuzz what the lab reads from files (issue 19): the first byte picks the reader, the rest
//! is the file's content, written to a temporary file and read the way the lab reads it —
//! through the capped reader (`cni_csi_lab::files::read_capped`), then the conflist, save-file,
//! lesson or script parser. Errors are fine; a panic, a hang or unbounded memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("lab-fuzz-files-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(match pick % 4 {
        0 => "in.conflist",
        1 => "in.json",
        2 => "in.md",
        _ => "in.lab",
    });
    let Ok(mut f) = std::fs::File::create(&path) else {
        return;
    };
    if f.write_all(body).is_err() {
        return;
    }
    drop(f);
    let file = path.to_string_lossy().to_string();
    match pick % 4 {
        0 => {
            let mut desk = lab_engine::Desk::with_lab(lab_engine::Lab::with_edges(
                lab_engine::Lab::new,
                lab_engine::edge::Edges::files(std::sync::Arc::new(cni_csi_lab::files::Disk)),
            ));
            let _ = desk.execute(&format!("cni conf load {file} --node node-1"));
            let _ = desk.execute("pod create web --node node-1");
        }
        1 => {
            let _ = lab_engine::Lab::read_save(&cni_csi_lab::files::Disk, &file);
        }
        2 => {
            if let Ok(text) = cni_csi_lab::files::read_capped(
                &path,
                "a lesson",
                cni_csi_lab::files::CONFIG_CAP,
            ) {
                let _ = lab_engine::lesson::parse::parse(&file, &text);
            }
        }
        _ => {
            // A script, as `run FILE` reads it: bounded like the execute target.
            if let Ok(text) = cni_csi_lab::files::read_capped(
                &path,
                "a script",
                cni_csi_lab::files::SCRIPT_CAP,
            ) {
                let mut desk = lab_engine::Desk::new();
                for line in text.lines().take(64) {
                    if !line.trim_start().starts_with("lesson") {
                        let _ = desk.execute(line);
                    }
                }
            }
        }
    }
});
