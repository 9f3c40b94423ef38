//! The second-NodePublishVolume table of the CSI spec (reference E.5), table-driven:
//! T = target path, P = the other arguments (here: readonly).

use super::driver::{Driver, DriverConfig};
use super::status::Code;
use super::types::*;

type Outcome = Option<Code>;
const OK: Outcome = None;
const AE: Outcome = Some(Code::AlreadyExists);
const FP: Outcome = Some(Code::FailedPrecondition);

/// Publishes a volume of `mode` at /t1, then a second time with (same target?, same args?)
/// and returns the second call's outcome.
fn second_publish(
    config: DriverConfig,
    mode: AccessModeType,
    same_t: bool,
    same_p: bool,
) -> Outcome {
    let mut d = Driver::new(config);
    d.add_node_default("node-1", None).unwrap();
    let c = VolumeCapability::mount(mode, "ext4");
    let vol = d
        .create_volume(CreateVolumeRequest {
            name: "v".into(),
            volume_capabilities: vec![c.clone()],
            ..Default::default()
        })
        .unwrap()
        .volume
        .unwrap()
        .volume_id;
    d.controller_publish_volume(ControllerPublishVolumeRequest {
        volume_id: vol.clone(),
        node_id: "node-1".into(),
        volume_capability: Some(c.clone()),
        ..Default::default()
    })
    .unwrap();
    let mut n = d.node("node-1").unwrap();
    n.node_stage_volume(NodeStageVolumeRequest {
        volume_id: vol.clone(),
        staging_target_path: "/staging".into(),
        volume_capability: Some(c.clone()),
        ..Default::default()
    })
    .unwrap();
    let first = NodePublishVolumeRequest {
        volume_id: vol.clone(),
        staging_target_path: "/staging".into(),
        target_path: "/t1".into(),
        volume_capability: Some(c),
        ..Default::default()
    };
    n.node_publish_volume(first.clone()).unwrap();
    let second = NodePublishVolumeRequest {
        target_path: if same_t { "/t1" } else { "/t2" }.into(),
        readonly: !same_p,
        ..first
    };
    let before = d.clone();
    let r = d.node("node-1").unwrap().node_publish_volume(second);
    match r {
        Ok(_) => None,
        Err(s) => {
            assert_eq!(d, before, "a rejected publish changes nothing");
            Some(s.code)
        }
    }
}

#[test]
fn second_node_publish_table() {
    use AccessModeType as M;
    // mode, then (T=,P=) (T=,P≠) (T≠,P=) (T≠,P≠); the driver supports SINGLE_NODE_MULTI_WRITER.
    let table: &[(M, [Outcome; 4])] = &[
        (M::MultiNodeReaderOnly, [OK, AE, OK, OK]),
        (M::MultiNodeSingleWriter, [OK, AE, OK, OK]),
        (M::MultiNodeMultiWriter, [OK, AE, OK, OK]),
        (M::SingleNodeWriter, [OK, AE, FP, FP]),
        (M::SingleNodeReaderOnly, [OK, AE, FP, FP]),
        (M::SingleNodeSingleWriter, [OK, AE, FP, FP]),
        (M::SingleNodeMultiWriter, [OK, AE, OK, OK]),
    ];
    let cols = [(true, true), (true, false), (false, true), (false, false)];
    for (mode, expected) in table {
        for ((same_t, same_p), want) in cols.iter().zip(expected) {
            assert_eq!(
                second_publish(DriverConfig::default(), *mode, *same_t, *same_p),
                *want,
                "{mode} T{} P{}",
                if *same_t { "=" } else { "≠" },
                if *same_p { "=" } else { "≠" }
            );
        }
    }
}

#[test]
fn second_node_publish_without_single_node_multi_writer_uses_the_non_multi_node_row() {
    let mut config = DriverConfig::default();
    config
        .node_capabilities
        .retain(|c| *c != NodeRpcType::SingleNodeMultiWriter);
    assert_eq!(
        second_publish(
            config.clone(),
            AccessModeType::SingleNodeMultiWriter,
            false,
            true
        ),
        FP
    );
    assert_eq!(
        second_publish(config, AccessModeType::MultiNodeMultiWriter, false, false),
        OK
    );
}
