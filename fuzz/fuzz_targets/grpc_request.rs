//! Fuzz the gRPC request path of `csi serve` without a socket (`csi_serve::grpc::call_lab`:
//! decode the bytes a client sends as the method's request message, run the call on the
//! lab as the server does, encode the answer). The input is a few calls on one lab, each a
//! byte that picks the method (one past the served ones is a method not served), a length
//! byte, and that many bytes of request. Any status is fine; a panic, a hang, or an answer
//! of the lab that does not encode as the method's response message is a bug.
#![no_main]

use cni_csi_lab::csi_serve::grpc;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn paths() -> &'static [String] {
    static PATHS: OnceLock<Vec<String>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let mut p = grpc::method_paths();
        p.push("/csi.v1.Controller/NoSuchMethod".to_string());
        p
    })
}

fuzz_target!(|data: &[u8]| {
    let mut lab = cni_csi_lab::Lab::new();
    let mut rest = data;
    // A bounded number of calls per input keeps each run short.
    for _ in 0..8 {
        let [pick, len, tail @ ..] = rest else {
            break;
        };
        let (body, more) = tail.split_at(usize::from(*len).min(tail.len()));
        rest = more;
        let path = &paths()[usize::from(*pick) % paths().len()];
        if let Err(s) = grpc::call_lab(&mut lab, Some("node-1"), path, body) {
            assert!(
                !s.message.starts_with("grpc: error while marshaling"),
                "{path}: the lab's answer is not the response message: {}",
                s.message
            );
        }
    }
});
