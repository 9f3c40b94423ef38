//! The CSI spec's error tables beyond what csi-sanity exercises (spec.md, each RPC's
//! "Error Scheme"): incompatible repeats are ALREADY_EXISTS, missing or unusable capability
//! fields and ranges are INVALID_ARGUMENT, and NodeGetVolumeStats reports what hostpath does.

use super::driver::Driver;
use super::status::Code;
use super::types::*;

const GIB: i64 = 1 << 30;

fn driver() -> Driver {
    let mut d = Driver::default();
    d.add_node_default("node-1", Some("zone-1")).unwrap();
    d
}

fn mount(mode: AccessModeType) -> VolumeCapability {
    VolumeCapability::mount(mode, "ext4")
}

fn block(mode: AccessModeType) -> VolumeCapability {
    VolumeCapability {
        block: Some(BlockVolume {}),
        mount: None,
        access_mode: Some(AccessMode { mode }),
    }
}

fn create(name: &str, caps: Vec<VolumeCapability>) -> CreateVolumeRequest {
    CreateVolumeRequest {
        name: name.into(),
        capacity_range: Some(CapacityRange {
            required_bytes: GIB,
            limit_bytes: 0,
        }),
        volume_capabilities: caps,
        ..Default::default()
    }
}

fn code_and_message<T: std::fmt::Debug>(r: Result<T, super::status::Status>) -> (Code, String) {
    let s = r.expect_err("the call should fail");
    (s.code, s.message)
}

#[test]
fn create_volume_with_the_same_name_and_another_access_mode_is_already_exists() {
    let mut d = driver();
    d.create_volume(create("v", vec![mount(AccessModeType::SingleNodeWriter)]))
        .unwrap();
    // The same request again is the same volume.
    d.create_volume(create("v", vec![mount(AccessModeType::SingleNodeWriter)]))
        .unwrap();
    assert_eq!(
        code_and_message(d.create_volume(create(
            "v",
            vec![mount(AccessModeType::MultiNodeReaderOnly)]
        ))),
        (
            Code::AlreadyExists,
            "Volume with the same name: v but with different access mode already exist".into()
        )
    );
}

#[test]
fn create_volume_needs_an_access_mode_and_an_access_type() {
    let mut d = driver();
    let unknown = VolumeCapability {
        access_mode: Some(AccessMode {
            mode: AccessModeType::Unknown,
        }),
        ..mount(AccessModeType::SingleNodeWriter)
    };
    assert_eq!(
        code_and_message(d.create_volume(create("v", vec![unknown]))),
        (
            Code::InvalidArgument,
            "volume_capabilities[0]: access_mode is required and cannot be UNKNOWN".into()
        )
    );
    let no_type = VolumeCapability {
        block: None,
        mount: None,
        access_mode: Some(AccessMode {
            mode: AccessModeType::SingleNodeWriter,
        }),
    };
    assert_eq!(
        code_and_message(d.create_volume(create(
            "v",
            vec![mount(AccessModeType::SingleNodeWriter), no_type]
        ))),
        (
            Code::InvalidArgument,
            "volume_capabilities[1]: one of access type block or mount is required".into()
        )
    );
    assert_eq!(d.volumes().count(), 0, "a refused request creates nothing");
}

#[test]
fn controller_publish_with_a_capability_the_volume_was_not_created_with_is_invalid() {
    let mut d = driver();
    let vol = d
        .create_volume(create("v", vec![mount(AccessModeType::SingleNodeWriter)]))
        .unwrap()
        .volume
        .unwrap()
        .volume_id;
    let req = ControllerPublishVolumeRequest {
        volume_id: vol.clone(),
        node_id: "node-1".into(),
        volume_capability: Some(block(AccessModeType::SingleNodeWriter)),
        ..Default::default()
    };
    assert_eq!(
        code_and_message(d.controller_publish_volume(req)),
        (
            Code::InvalidArgument,
            "cannot publish a non-block volume as block volume".into()
        )
    );
}

#[test]
fn controller_expand_with_required_above_limit_is_invalid() {
    let mut d = driver();
    let vol = d
        .create_volume(create("v", vec![mount(AccessModeType::SingleNodeWriter)]))
        .unwrap()
        .volume
        .unwrap()
        .volume_id;
    let req = ControllerExpandVolumeRequest {
        volume_id: vol,
        capacity_range: Some(CapacityRange {
            required_bytes: 3 * GIB,
            limit_bytes: 2 * GIB,
        }),
        ..Default::default()
    };
    assert_eq!(
        code_and_message(d.controller_expand_volume(req)),
        (Code::InvalidArgument, "capacity cannot exceed limit".into())
    );
}
