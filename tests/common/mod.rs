//! Small helpers the scenario tests share: run a line and get its text, and read a pod of
//! the default namespace back.
#![allow(dead_code)] // each test crate uses its own subset

use cni_csi_lab::engine::Lab;

/// Run one command line; its output as text (a rejected line fails the test, naming it).
pub fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

/// The store key of an object in the default namespace.
pub fn key(name: &str) -> (String, String) {
    ("default".to_string(), name.to_string())
}

/// A pod's phase.
pub fn phase(lab: &Lab, pod: &str) -> String {
    lab.cluster.pods[&key(pod)].status.phase.to_string()
}
