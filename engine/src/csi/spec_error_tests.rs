//! The CSI spec's error tables beyond what csi-sanity exercises (spec.md, each RPC's
//! "Error Scheme"): incompatible repeats are ALREADY_EXISTS, missing or unusable capability
//! fields and ranges are INVALID_ARGUMENT, and NodeGetVolumeStats reports what hostpath does.
//! Where the spec is silent (topology, lifecycle order) the code and message are hostpath's.
//! One test per rule, each asserting the code and the message, and that a refusal changes
//! nothing.

use super::driver::{Driver, LifecycleState};
use super::status::Code;
use super::types::*;

const GIB: i64 = 1 << 30;

fn driver() -> Driver {
    let mut d = Driver::default();
    d.add_node_default("node-1", Some("zone-1")).unwrap();
    d
}

fn two_nodes() -> Driver {
    let mut d = driver();
    d.add_node_default("node-2", Some("zone-2")).unwrap();
    d
}

const SNW: AccessModeType = AccessModeType::SingleNodeWriter;
const STAGING: &str = "/staging";
const TARGET: &str = "/target";

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

/// CreateVolume as external-provisioner sends it for a WaitForFirstConsumer claim: the
/// selected node's topology is requisite and preferred.
fn create_on(d: &mut Driver, name: &str, node: &str) -> String {
    let segments = d
        .nodes()
        .find(|n| n.node_id == node)
        .unwrap()
        .segments
        .clone();
    let topology = Topology { segments };
    let req = CreateVolumeRequest {
        accessibility_requirements: Some(TopologyRequirement {
            requisite: vec![topology.clone()],
            preferred: vec![topology],
        }),
        ..create(name, vec![mount(SNW)])
    };
    let v = d.create_volume(req).unwrap().volume.unwrap();
    assert!(
        !v.accessible_topology.is_empty(),
        "the volume carries topology"
    );
    v.volume_id
}

fn create_plain(d: &mut Driver, name: &str, cap: VolumeCapability) -> String {
    d.create_volume(create(name, vec![cap]))
        .unwrap()
        .volume
        .unwrap()
        .volume_id
}

fn attach(vol: &str, node: &str, cap: VolumeCapability) -> ControllerPublishVolumeRequest {
    ControllerPublishVolumeRequest {
        volume_id: vol.into(),
        node_id: node.into(),
        volume_capability: Some(cap),
        ..Default::default()
    }
}

fn stage(vol: &str, cap: VolumeCapability) -> NodeStageVolumeRequest {
    NodeStageVolumeRequest {
        volume_id: vol.into(),
        staging_target_path: STAGING.into(),
        volume_capability: Some(cap),
        ..Default::default()
    }
}

fn publish(vol: &str, cap: VolumeCapability) -> NodePublishVolumeRequest {
    NodePublishVolumeRequest {
        volume_id: vol.into(),
        staging_target_path: STAGING.into(),
        target_path: TARGET.into(),
        volume_capability: Some(cap),
        ..Default::default()
    }
}

/// Attached, staged and published on node-1 with `cap`.
fn published_on_node_1(d: &mut Driver, vol: &str, cap: VolumeCapability) {
    d.controller_publish_volume(attach(vol, "node-1", cap.clone()))
        .unwrap();
    let mut n = d.node("node-1").unwrap();
    n.node_stage_volume(stage(vol, cap.clone())).unwrap();
    n.node_publish_volume(publish(vol, cap)).unwrap();
}

#[test]
fn controller_publish_outside_the_volume_topology_is_not_found() {
    let mut d = two_nodes();
    let vol = create_on(&mut d, "v", "node-1");
    let before = d.clone();
    assert_eq!(
        code_and_message(d.controller_publish_volume(attach(&vol, "node-2", mount(SNW)))),
        (
            Code::NotFound,
            "Not matching Node ID node-2 to hostpath Node ID node-1".into()
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
    d.controller_publish_volume(attach(&vol, "node-1", mount(SNW)))
        .unwrap();
    // A volume created without accessibility requirements carries no topology and is
    // reachable from every node.
    let anywhere = create_plain(&mut d, "w", mount(SNW));
    d.controller_publish_volume(attach(&anywhere, "node-2", mount(SNW)))
        .unwrap();
}

#[test]
fn node_rpcs_outside_the_volume_topology_are_not_found() {
    let mut d = two_nodes();
    let vol = create_on(&mut d, "v", "node-1");
    published_on_node_1(&mut d, &vol, mount(SNW));
    let before = d.clone();
    let unknown = (
        Code::NotFound,
        format!("volume id {vol} does not exist in the volumes list"),
    );
    let mut n = d.node("node-2").unwrap();
    // NOT_FOUND comes first, before NodeStage's "ControllerPublishVolume must be called".
    assert_eq!(
        code_and_message(n.node_stage_volume(stage(&vol, mount(SNW)))),
        unknown
    );
    assert_eq!(
        code_and_message(n.node_publish_volume(publish(&vol, mount(SNW)))),
        unknown
    );
    assert_eq!(
        code_and_message(n.node_unpublish_volume(NodeUnpublishVolumeRequest {
            volume_id: vol.clone(),
            target_path: TARGET.into(),
        })),
        unknown
    );
    assert_eq!(
        code_and_message(n.node_unstage_volume(NodeUnstageVolumeRequest {
            volume_id: vol.clone(),
            staging_target_path: STAGING.into(),
        })),
        unknown
    );
    assert_eq!(
        code_and_message(n.node_get_volume_stats(NodeGetVolumeStatsRequest {
            volume_id: vol.clone(),
            volume_path: TARGET.into(),
            ..Default::default()
        })),
        unknown
    );
    assert_eq!(
        code_and_message(n.node_expand_volume(NodeExpandVolumeRequest {
            volume_id: vol.clone(),
            volume_path: TARGET.into(),
            ..Default::default()
        })),
        unknown
    );
    assert_eq!(d, before, "a refused call changes nothing");
}

#[test]
fn node_expand_with_a_block_capability_on_a_mount_volume_is_invalid() {
    let mut d = driver();
    let vol = create_plain(&mut d, "v", mount(SNW));
    published_on_node_1(&mut d, &vol, mount(SNW));
    let before = d.clone();
    let req = NodeExpandVolumeRequest {
        volume_id: vol.clone(),
        volume_path: TARGET.into(),
        capacity_range: Some(CapacityRange {
            required_bytes: GIB,
            limit_bytes: 0,
        }),
        staging_target_path: STAGING.into(),
        volume_capability: Some(block(SNW)),
        ..Default::default()
    };
    assert_eq!(
        code_and_message(d.node("node-1").unwrap().node_expand_volume(req.clone())),
        (
            Code::InvalidArgument,
            format!("Volume {vol} is not a block device")
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
    // The capability it was created with is fine, and so is none (hostpath reads the path).
    let mut n = d.node("node-1").unwrap();
    n.node_expand_volume(NodeExpandVolumeRequest {
        volume_capability: Some(mount(SNW)),
        ..req.clone()
    })
    .unwrap();
    n.node_expand_volume(NodeExpandVolumeRequest {
        volume_capability: None,
        ..req
    })
    .unwrap();
}

#[test]
fn node_expand_with_a_mount_capability_on_a_block_volume_is_invalid() {
    let mut d = driver();
    let vol = create_plain(&mut d, "b", block(SNW));
    published_on_node_1(&mut d, &vol, block(SNW));
    let before = d.clone();
    let req = NodeExpandVolumeRequest {
        volume_id: vol.clone(),
        volume_path: TARGET.into(),
        staging_target_path: STAGING.into(),
        volume_capability: Some(mount(SNW)),
        ..Default::default()
    };
    assert_eq!(
        code_and_message(d.node("node-1").unwrap().node_expand_volume(req)),
        (
            Code::InvalidArgument,
            format!("Volume {vol} is not a directory")
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
}

#[test]
fn node_stage_before_controller_publish_is_internal() {
    let mut d = driver();
    let vol = create_plain(&mut d, "v", mount(SNW));
    let before = d.clone();
    assert_eq!(
        code_and_message(
            d.node("node-1")
                .unwrap()
                .node_stage_volume(stage(&vol, mount(SNW)))
        ),
        (
            Code::Internal,
            format!(
                "ControllerPublishVolume must be called on volume '{vol}' before staging on node"
            )
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
}

#[test]
fn node_publish_before_node_stage_is_failed_precondition() {
    let mut d = driver();
    let vol = create_plain(&mut d, "v", mount(SNW));
    d.controller_publish_volume(attach(&vol, "node-1", mount(SNW)))
        .unwrap();
    let before = d.clone();
    assert_eq!(
        code_and_message(
            d.node("node-1")
                .unwrap()
                .node_publish_volume(publish(&vol, mount(SNW)))
        ),
        (
            Code::FailedPrecondition,
            format!("volume {vol:?} must be staged before publishing")
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
}

#[test]
fn node_publish_before_controller_publish_without_staging_is_internal() {
    let mut d = Driver::new(super::driver::DriverConfig::without_staging());
    d.add_node_default("node-1", None).unwrap();
    let vol = create_plain(&mut d, "v", mount(SNW));
    let before = d.clone();
    let req = NodePublishVolumeRequest {
        staging_target_path: String::new(),
        ..publish(&vol, mount(SNW))
    };
    assert_eq!(
        code_and_message(d.node("node-1").unwrap().node_publish_volume(req)),
        (
            Code::Internal,
            format!(
                "ControllerPublishVolume must be called on volume '{vol}' before publishing on node"
            )
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
}

#[test]
fn node_unstage_while_published_is_internal() {
    let mut d = driver();
    let vol = create_plain(&mut d, "v", mount(SNW));
    published_on_node_1(&mut d, &vol, mount(SNW));
    let before = d.clone();
    assert_eq!(
        code_and_message(
            d.node("node-1")
                .unwrap()
                .node_unstage_volume(NodeUnstageVolumeRequest {
                    volume_id: vol.clone(),
                    staging_target_path: STAGING.into(),
                })
        ),
        (
            Code::Internal,
            format!("volume {vol:?} is still published at [\"/target\"] on node \"node-1\"")
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
}

#[test]
fn controller_unpublish_while_staged_or_published_is_internal() {
    let mut d = driver();
    let vol = create_plain(&mut d, "v", mount(SNW));
    published_on_node_1(&mut d, &vol, mount(SNW));
    let detach = ControllerUnpublishVolumeRequest {
        volume_id: vol.clone(),
        node_id: "node-1".into(),
        ..Default::default()
    };
    let before = d.clone();
    assert_eq!(
        code_and_message(d.controller_unpublish_volume(detach.clone())),
        (
            Code::Internal,
            format!(
                "Volume '{vol}' is still used (staged: [/staging], published: [/target]) by 'node-1' node"
            )
        )
    );
    assert_eq!(d, before, "a refused call changes nothing");
    d.node("node-1")
        .unwrap()
        .node_unpublish_volume(NodeUnpublishVolumeRequest {
            volume_id: vol.clone(),
            target_path: TARGET.into(),
        })
        .unwrap();
    assert_eq!(d.lifecycle(&vol, "node-1"), Some(LifecycleState::VolReady));
    assert_eq!(
        code_and_message(d.controller_unpublish_volume(detach)),
        (
            Code::Internal,
            format!(
                "Volume '{vol}' is still used (staged: [/staging], published: []) by 'node-1' node"
            )
        )
    );
}
