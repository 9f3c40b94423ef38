//! Property test over random RPC sequences: the lifecycle invariants of spec §E.2 hold after
//! every call, a volume with topology is used only on its node, capacity is conserved, and a
//! rejected call changes nothing.

use super::driver::{Driver, DriverConfig};
use super::types::*;
use proptest::prelude::*;

const GIB: i64 = 1 << 30;
const NODES: [&str; 2] = ["node-1", "node-2"];
const MODES: [AccessModeType; 5] = [
    AccessModeType::SingleNodeWriter,
    AccessModeType::SingleNodeSingleWriter,
    AccessModeType::SingleNodeMultiWriter,
    AccessModeType::MultiNodeReaderOnly,
    AccessModeType::MultiNodeMultiWriter,
];

#[derive(Debug, Clone)]
enum Op {
    Create {
        name: u8,
        mode: usize,
        gib: i64,
        /// Created with this node's topology as its accessibility requirement.
        home: Option<usize>,
    },
    Delete {
        vol: usize,
    },
    Attach {
        vol: usize,
        node: usize,
        mode: usize,
        ro: bool,
    },
    Detach {
        vol: usize,
        node: Option<usize>,
    },
    Stage {
        vol: usize,
        node: usize,
        path: u8,
        mode: usize,
    },
    Unstage {
        vol: usize,
        node: usize,
        path: u8,
    },
    Publish {
        vol: usize,
        node: usize,
        target: u8,
        path: u8,
        mode: usize,
        ro: bool,
    },
    Unpublish {
        vol: usize,
        node: usize,
        target: u8,
    },
    Expand {
        vol: usize,
        gib: i64,
    },
    NodeExpand {
        vol: usize,
        node: usize,
        target: u8,
    },
    Snapshot {
        name: u8,
        vol: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let m = 0..MODES.len();
    prop_oneof![
        (
            0u8..4,
            m.clone(),
            0i64..20,
            proptest::option::of(0usize..NODES.len())
        )
            .prop_map(|(name, mode, gib, home)| Op::Create {
                name,
                mode,
                gib,
                home
            }),
        (0usize..5).prop_map(|vol| Op::Delete { vol }),
        (0usize..5, 0usize..2, m.clone(), any::<bool>()).prop_map(|(vol, node, mode, ro)| {
            Op::Attach {
                vol,
                node,
                mode,
                ro,
            }
        }),
        (0usize..5, proptest::option::of(0usize..2))
            .prop_map(|(vol, node)| Op::Detach { vol, node }),
        (0usize..5, 0usize..2, 0u8..2, m.clone()).prop_map(|(vol, node, path, mode)| Op::Stage {
            vol,
            node,
            path,
            mode
        }),
        (0usize..5, 0usize..2, 0u8..2).prop_map(|(vol, node, path)| Op::Unstage {
            vol,
            node,
            path
        }),
        (0usize..5, 0usize..2, 0u8..3, 0u8..2, m, any::<bool>()).prop_map(
            |(vol, node, target, path, mode, ro)| Op::Publish {
                vol,
                node,
                target,
                path,
                mode,
                ro
            }
        ),
        (0usize..5, 0usize..2, 0u8..3).prop_map(|(vol, node, target)| Op::Unpublish {
            vol,
            node,
            target
        }),
        (0usize..5, 0i64..30).prop_map(|(vol, gib)| Op::Expand { vol, gib }),
        (0usize..5, 0usize..2, 0u8..3).prop_map(|(vol, node, target)| Op::NodeExpand {
            vol,
            node,
            target
        }),
        (0u8..3, 0usize..5).prop_map(|(name, vol)| Op::Snapshot { name, vol }),
    ]
}

/// The i-th existing volume ID, or an unknown one past the end.
fn vol_id(d: &Driver, i: usize) -> String {
    d.volumes()
        .nth(i)
        .map(|v| v.volume_id.clone())
        .unwrap_or_else(|| "vol-unknown".to_string())
}

fn apply(d: &mut Driver, op: &Op) -> Result<(), super::Status> {
    let cap = |m: usize| VolumeCapability::mount(MODES[m % MODES.len()], "ext4");
    match op.clone() {
        Op::Create {
            name,
            mode,
            gib,
            home,
        } => {
            let accessibility_requirements = home.map(|h| {
                let t = Topology {
                    segments: [(super::TOPOLOGY_KEY_NODE.to_string(), NODES[h].to_string())]
                        .into_iter()
                        .collect(),
                };
                TopologyRequirement {
                    requisite: vec![t.clone()],
                    preferred: vec![t],
                }
            });
            d.create_volume(CreateVolumeRequest {
                name: format!("pvc-{name}"),
                capacity_range: Some(CapacityRange {
                    required_bytes: gib * GIB,
                    limit_bytes: 0,
                }),
                volume_capabilities: vec![cap(mode)],
                accessibility_requirements,
                ..Default::default()
            })
            .map(drop)
        }
        Op::Delete { vol } => d
            .delete_volume(DeleteVolumeRequest {
                volume_id: vol_id(d, vol),
                ..Default::default()
            })
            .map(drop),
        Op::Attach {
            vol,
            node,
            mode,
            ro,
        } => d
            .controller_publish_volume(ControllerPublishVolumeRequest {
                volume_id: vol_id(d, vol),
                node_id: NODES[node].into(),
                volume_capability: Some(cap(mode)),
                readonly: ro,
                ..Default::default()
            })
            .map(drop),
        Op::Detach { vol, node } => d
            .controller_unpublish_volume(ControllerUnpublishVolumeRequest {
                volume_id: vol_id(d, vol),
                node_id: node.map(|n| NODES[n].to_string()).unwrap_or_default(),
                ..Default::default()
            })
            .map(drop),
        Op::Stage {
            vol,
            node,
            path,
            mode,
        } => {
            let volume_id = vol_id(d, vol);
            d.node(NODES[node])?
                .node_stage_volume(NodeStageVolumeRequest {
                    volume_id,
                    staging_target_path: format!("/staging/{path}"),
                    volume_capability: Some(cap(mode)),
                    ..Default::default()
                })
                .map(drop)
        }
        Op::Unstage { vol, node, path } => {
            let volume_id = vol_id(d, vol);
            d.node(NODES[node])?
                .node_unstage_volume(NodeUnstageVolumeRequest {
                    volume_id,
                    staging_target_path: format!("/staging/{path}"),
                })
                .map(drop)
        }
        Op::Publish {
            vol,
            node,
            target,
            path,
            mode,
            ro,
        } => {
            let volume_id = vol_id(d, vol);
            d.node(NODES[node])?
                .node_publish_volume(NodePublishVolumeRequest {
                    volume_id,
                    staging_target_path: format!("/staging/{path}"),
                    target_path: format!("/pods/{target}"),
                    volume_capability: Some(cap(mode)),
                    readonly: ro,
                    ..Default::default()
                })
                .map(drop)
        }
        Op::Unpublish { vol, node, target } => {
            let volume_id = vol_id(d, vol);
            d.node(NODES[node])?
                .node_unpublish_volume(NodeUnpublishVolumeRequest {
                    volume_id,
                    target_path: format!("/pods/{target}"),
                })
                .map(drop)
        }
        Op::Expand { vol, gib } => d
            .controller_expand_volume(ControllerExpandVolumeRequest {
                volume_id: vol_id(d, vol),
                capacity_range: Some(CapacityRange {
                    required_bytes: gib * GIB,
                    limit_bytes: 0,
                }),
                ..Default::default()
            })
            .map(drop),
        Op::NodeExpand { vol, node, target } => {
            let volume_id = vol_id(d, vol);
            d.node(NODES[node])?
                .node_expand_volume(NodeExpandVolumeRequest {
                    volume_id,
                    volume_path: format!("/pods/{target}"),
                    ..Default::default()
                })
                .map(drop)
        }
        Op::Snapshot { name, vol } => d
            .create_snapshot(CreateSnapshotRequest {
                name: format!("snap-{name}"),
                source_volume_id: vol_id(d, vol),
                ..Default::default()
            })
            .map(drop),
    }
}

fn check_invariants(d: &mut Driver, total: i64) {
    let mut sum = 0;
    for v in d.volumes() {
        sum += v.capacity_bytes;
        assert!(v.fs_size_bytes <= v.capacity_bytes);
        for node in NODES {
            let holds = v.attachments.contains_key(node)
                || v.staged.contains_key(node)
                || !v.targets_on(node).is_empty();
            if let Some(home) = v.topology_node() {
                assert!(
                    !holds || home == node,
                    "{} lives on {home} but is used on {node}",
                    v.volume_id
                );
            }
            if !v.targets_on(node).is_empty() {
                assert!(
                    v.staged.contains_key(node),
                    "{} published on {node} but not staged",
                    v.volume_id
                );
            }
            if v.staged.contains_key(node) {
                assert!(
                    v.attachments.contains_key(node),
                    "{} staged on {node} but not controller-published",
                    v.volume_id
                );
            }
        }
        let mut modes: Vec<AccessModeType> = v
            .attachments
            .values()
            .map(|a| a.capability.mode())
            .collect();
        modes.extend(v.staged.values().map(|s| s.capability.mode()));
        modes.extend(
            v.published
                .values()
                .flat_map(|t| t.values().map(|p| p.capability.mode())),
        );
        let holders = NODES
            .iter()
            .filter(|n| {
                v.attachments.contains_key(**n)
                    || v.staged.contains_key(**n)
                    || !v.targets_on(n).is_empty()
            })
            .count();
        if modes.iter().any(|m| !m.is_multi_node()) {
            assert!(
                holders <= 1,
                "{} is SINGLE_NODE_* on {holders} nodes",
                v.volume_id
            );
        }
    }
    let available = d
        .get_capacity(Default::default())
        .unwrap()
        .available_capacity;
    assert_eq!(available + sum, total, "capacity is conserved");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_rpc_sequences_keep_the_lifecycle_invariants(ops in proptest::collection::vec(op(), 1..60)) {
        let total = 64 * GIB;
        let mut d = Driver::new(DriverConfig {
            total_capacity: total,
            max_volume_size: 24 * GIB,
            ..DriverConfig::default()
        });
        d.add_node("node-1", Some("zone-1"), 3).unwrap();
        d.add_node("node-2", Some("zone-2"), 3).unwrap();
        for op in &ops {
            let before = d.clone();
            if apply(&mut d, op).is_err() {
                prop_assert_eq!(&d, &before, "rejected {:?} changed state", op);
            }
            check_invariants(&mut d, total);
        }
    }

    #[test]
    fn any_json_to_any_rpc_never_panics(rpc in proptest::sample::select(super::dispatch::RPCS.iter().map(|(m, _)| *m).collect::<Vec<_>>()),
                                         key in "[a-z_]{1,20}", val in any::<i64>(), text in ".{0,12}") {
        let mut d = Driver::default();
        d.add_node_default("node-1", None).unwrap();
        for req in [
            serde_json::json!({}),
            serde_json::json!({ key.clone(): val }),
            serde_json::json!({ key.clone(): text.clone() }),
            serde_json::json!({"volume_id": text.clone(), "name": text.clone(), "capacity_range": {"required_bytes": val.to_string()}}),
            serde_json::json!([1, 2]),
        ] {
            let _ = d.call(Some("node-1"), rpc, &req);
        }
    }
}
