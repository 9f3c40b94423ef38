//! Starting clusters for `--preset NAME|FILE`. `default` is what `Lab::new()` builds and
//! `empty` is `Lab::empty()`; the others are scripts of lab commands under
//! `assets/presets/*.lab` (embedded), run on an empty lab. A FILE preset is the same: a
//! script run on an empty lab. The first failing line rejects the preset.

use crate::engine::Lab;
use crate::script::logical_lines;

/// The embedded presets: name, one-line description, script.
pub const PRESETS: &[(&str, &str, &str)] = &[
    (
        "single-node",
        "one node, node-1",
        include_str!("../assets/presets/single-node.lab"),
    ),
    (
        "three-nodes",
        "node-1, node-2 and node-3 in two zones",
        include_str!("../assets/presets/three-nodes.lab"),
    ),
];

/// Every preset name, with a description (for `--help` and errors).
pub fn names() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        ("default", "node-1 and node-2 (what the lab starts with)"),
        ("empty", "no nodes"),
    ];
    v.extend(PRESETS.iter().map(|(n, d, _)| (*n, *d)));
    v
}

/// Run a script of lab commands on `lab`; the first failure is an error naming its line.
pub fn apply_script(lab: &mut Lab, origin: &str, text: &str) -> Result<(), String> {
    for (line_no, line) in logical_lines(text) {
        if let Err(e) = lab.execute(&line) {
            return Err(format!("{origin}:{line_no}: {}", e.message));
        }
    }
    Ok(())
}

/// Build the lab for a preset name, or for a FILE of lab commands.
pub fn build(preset: &str) -> Result<Lab, String> {
    match preset {
        "default" => return Ok(Lab::new()),
        "empty" => return Ok(Lab::empty()),
        _ => {}
    }
    let mut lab = Lab::empty();
    if let Some((name, _, text)) = PRESETS.iter().find(|(n, _, _)| *n == preset) {
        apply_script(&mut lab, &format!("preset {name}"), text)?;
        return Ok(lab);
    }
    match std::fs::read_to_string(preset) {
        Ok(text) => {
            apply_script(&mut lab, preset, &text)?;
            Ok(lab)
        }
        Err(e) => {
            let known: Vec<&str> = names().iter().map(|(n, _)| *n).collect();
            Err(format!(
                "unknown preset {preset:?} (and no such file: {e}); presets are: {}, or a FILE of lab commands",
                known.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds() {
        for (name, _) in names() {
            let lab = build(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let n = lab.cluster.nodes.len();
            match name {
                "empty" => assert_eq!(n, 0),
                "single-node" => assert_eq!(n, 1),
                "default" => assert_eq!(n, 2),
                "three-nodes" => assert_eq!(n, 3),
                _ => assert!(n > 0, "{name}"),
            }
        }
    }

    #[test]
    fn unknown_presets_and_bad_files_are_errors() {
        let e = build("nine-nodes").err().unwrap();
        assert!(
            e.contains("presets are: default, empty, single-node"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("lab-preset-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.lab");
        std::fs::write(
            &f,
            "node add a --cidr 10.1.0.0/24\nnode add b --cidr 10.1.0.0/24\n",
        )
        .unwrap();
        let e = build(f.to_str().unwrap()).err().unwrap();
        assert!(e.contains("bad.lab:2: podCIDR 10.1.0.0/24 overlaps"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
