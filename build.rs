//! Compiles proto/csi.proto (the CSI spec's) into an encoded `FileDescriptorSet` in OUT_DIR
//! with protox, a protobuf compiler in Rust, so no `protoc` is needed. `csi serve` decodes
//! and encodes CSI messages with it and serves it over gRPC server reflection.

fn main() {
    println!("cargo:rerun-if-changed=proto/csi.proto");
    let fds = match protox::compile(["csi.proto"], ["proto"]) {
        Ok(fds) => fds,
        Err(e) => {
            eprintln!("error: cannot compile proto/csi.proto: {e:?}");
            std::process::exit(1);
        }
    };
    let Some(out) = std::env::var_os("OUT_DIR") else {
        eprintln!("error: OUT_DIR is not set (build.rs runs under cargo)");
        std::process::exit(1);
    };
    let path = std::path::Path::new(&out).join("csi_descriptor.bin");
    if let Err(e) = std::fs::write(&path, prost::Message::encode_to_vec(&fds)) {
        eprintln!("error: cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
}
