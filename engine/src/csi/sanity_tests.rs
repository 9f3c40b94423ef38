//! The csi-sanity checklist (`kubernetes-csi/csi-test:pkg/sanity`, reference §F), one test
//! per `It` that applies to this driver's capabilities, named after it. Defaults as in
//! csi-sanity: 10 GiB volumes, expand to size + 1 GiB, 128-character names.

use super::driver::{DRIVER_NAME, Driver, DriverConfig, LifecycleState};
use super::node::ACCESS_MODE_CONFLICT;
use super::status::{Code, Status};
use super::types::*;

const GIB: i64 = 1 << 30;
const SIZE: i64 = 10 * GIB;

fn driver() -> Driver {
    let mut d = Driver::default();
    d.add_node_default("node-1", Some("zone-1")).unwrap();
    d.add_node_default("node-2", Some("zone-2")).unwrap();
    d
}

fn cap(mode: AccessModeType) -> VolumeCapability {
    VolumeCapability::mount(mode, "")
}

fn snw() -> VolumeCapability {
    cap(AccessModeType::SingleNodeWriter)
}

fn create_req(name: &str, size: i64) -> CreateVolumeRequest {
    CreateVolumeRequest {
        name: name.into(),
        capacity_range: (size > 0).then_some(CapacityRange {
            required_bytes: size,
            limit_bytes: 0,
        }),
        volume_capabilities: vec![snw()],
        ..Default::default()
    }
}

fn create(d: &mut Driver, name: &str) -> Volume {
    d.create_volume(create_req(name, SIZE))
        .unwrap()
        .volume
        .unwrap()
}

fn err<T: std::fmt::Debug>(r: Result<T, Status>) -> Status {
    r.expect_err("the call should have failed")
}

fn assert_code<T: std::fmt::Debug>(r: Result<T, Status>, code: Code, message: &str) {
    let s = err(r);
    assert_eq!((s.code, s.message.as_str()), (code, message));
}

fn publish_req(vol: &str, node: &str) -> ControllerPublishVolumeRequest {
    ControllerPublishVolumeRequest {
        volume_id: vol.into(),
        node_id: node.into(),
        volume_capability: Some(snw()),
        ..Default::default()
    }
}

fn snapshot(d: &mut Driver, name: &str, vol: &str) -> Snapshot {
    d.create_snapshot(CreateSnapshotRequest {
        name: name.into(),
        source_volume_id: vol.into(),
        ..Default::default()
    })
    .unwrap()
    .snapshot
    .unwrap()
}

// ------------------------------------------------------------------ Identity Service

#[test]
fn identity_get_plugin_capabilities_should_return_appropriate_capabilities() {
    let r = driver()
        .get_plugin_capabilities(Default::default())
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::json!({"capabilities": [
            {"service": {"type": "CONTROLLER_SERVICE"}},
            {"service": {"type": "VOLUME_ACCESSIBILITY_CONSTRAINTS"}},
            {"volume_expansion": {"type": "ONLINE"}}
        ]})
    );
    for c in r.capabilities {
        match (c.service, c.volume_expansion) {
            (Some(s), None) => assert_ne!(s.kind, ServiceType::Unknown),
            (None, Some(e)) => assert_ne!(e.kind, ExpansionType::Unknown),
            other => panic!("unexpected capability {other:?}"),
        }
    }
}

#[test]
fn identity_probe_should_return_appropriate_information() {
    let mut d = driver();
    assert_eq!(d.probe(ProbeRequest {}).unwrap().ready, Some(true));
    d.set_ready(false);
    assert_eq!(d.probe(ProbeRequest {}).unwrap().ready, Some(false));
}

#[test]
fn identity_get_plugin_info_should_return_appropriate_information() {
    let r = driver().get_plugin_info(Default::default()).unwrap();
    assert_eq!(r.name, DRIVER_NAME);
    assert_eq!(r.vendor_version, env!("CARGO_PKG_VERSION"));
    // ^[a-zA-Z][A-Za-z0-9-\.\_]{0,61}[a-zA-Z]$
    let b = r.name.as_bytes();
    assert!((2..=63).contains(&b.len()));
    assert!(b[0].is_ascii_alphabetic() && b[b.len() - 1].is_ascii_alphabetic());
    assert!(
        b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-._".contains(c))
    );
}

// ------------------------------------------------------------------ Controller Service

#[test]
fn controller_get_capabilities_should_return_appropriate_capabilities() {
    let r = driver()
        .controller_get_capabilities(Default::default())
        .unwrap();
    let kinds: Vec<&str> = r
        .capabilities
        .iter()
        .map(|c| c.rpc.unwrap().kind.name())
        .collect();
    assert_eq!(
        kinds,
        [
            "CREATE_DELETE_VOLUME",
            "PUBLISH_UNPUBLISH_VOLUME",
            "LIST_VOLUMES",
            "GET_CAPACITY",
            "CREATE_DELETE_SNAPSHOT",
            "LIST_SNAPSHOTS",
            "CLONE_VOLUME",
            "PUBLISH_READONLY",
            "EXPAND_VOLUME",
            "LIST_VOLUMES_PUBLISHED_NODES",
            "GET_VOLUME",
            "SINGLE_NODE_MULTI_WRITER"
        ]
    );
}

#[test]
fn get_capacity_should_return_capacity_no_optional_values_added() {
    let mut d = driver();
    let before = d.get_capacity(Default::default()).unwrap();
    assert_eq!(before.available_capacity, 100 << 40);
    assert_eq!(before.maximum_volume_size, Some(1 << 40));
    assert_eq!(before.minimum_volume_size, Some(0));
    create(&mut d, "v");
    let after = d.get_capacity(Default::default()).unwrap();
    assert_eq!(after.available_capacity, (100 << 40) - SIZE);
}

#[test]
fn list_volumes_should_return_appropriate_values_no_optional_values_added() {
    let mut d = driver();
    let r = d.list_volumes(Default::default()).unwrap();
    assert!(r.entries.is_empty() && r.next_token.is_empty());
    let v = create(&mut d, "v");
    d.controller_publish_volume(publish_req(&v.volume_id, "node-1"))
        .unwrap();
    let r = d.list_volumes(Default::default()).unwrap();
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.entries[0].volume.as_ref().unwrap().volume_id, v.volume_id);
    assert_eq!(
        r.entries[0].status.as_ref().unwrap().published_node_ids,
        ["node-1"]
    );
}

#[test]
fn list_volumes_should_fail_when_an_invalid_starting_token_is_passed() {
    let mut d = driver();
    let req = ListVolumesRequest {
        max_entries: 0,
        starting_token: "invalid-token".into(),
    };
    assert_code(
        d.list_volumes(req),
        Code::Aborted,
        "The type of startingToken should be integer",
    );
    let req = ListVolumesRequest {
        max_entries: 0,
        starting_token: "5".into(),
    };
    assert_code(
        d.list_volumes(req),
        Code::Aborted,
        "startingToken=5 > len(volumes)=0",
    );
}

#[test]
fn list_volumes_check_the_presence_of_new_volumes_and_absence_of_deleted_ones_in_the_volume_list() {
    let mut d = driver();
    create(&mut d, "a");
    let n = d.list_volumes(Default::default()).unwrap().entries.len();
    let v = create(&mut d, "b");
    let list = d.list_volumes(Default::default()).unwrap().entries;
    assert_eq!(list.len(), n + 1);
    assert!(
        list.iter()
            .any(|e| e.volume.as_ref().unwrap().volume_id == v.volume_id)
    );
    d.delete_volume(DeleteVolumeRequest {
        volume_id: v.volume_id.clone(),
        ..Default::default()
    })
    .unwrap();
    let list = d.list_volumes(Default::default()).unwrap().entries;
    assert_eq!(list.len(), n);
}

#[test]
fn list_volumes_pages_with_next_token() {
    let mut d = driver();
    for name in ["a", "b", "c", "d", "e"] {
        create(&mut d, name);
    }
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let r = d
            .list_volumes(ListVolumesRequest {
                max_entries: 2,
                starting_token: token.clone(),
            })
            .unwrap();
        assert!(r.entries.len() <= 2);
        seen.extend(r.entries.into_iter().map(|e| e.volume.unwrap().volume_id));
        if r.next_token.is_empty() {
            break;
        }
        token = r.next_token;
    }
    let all: Vec<String> = d.volumes().map(|v| v.volume_id.clone()).collect();
    assert_eq!(seen, all);
}

#[test]
fn create_volume_should_fail_when_no_name_is_provided() {
    let mut d = driver();
    assert_code(
        d.create_volume(create_req("", SIZE)),
        Code::InvalidArgument,
        "Name missing in request",
    );
}

#[test]
fn create_volume_should_fail_when_no_volume_capabilities_are_provided() {
    let mut d = driver();
    let mut req = create_req("v", SIZE);
    req.volume_capabilities.clear();
    assert_code(
        d.create_volume(req),
        Code::InvalidArgument,
        "Volume Capabilities missing in request",
    );
}

#[test]
fn create_volume_should_return_appropriate_values_single_node_writer_no_capacity() {
    let mut d = driver();
    let v = d.create_volume(create_req("v", 0)).unwrap().volume.unwrap();
    assert!(!v.volume_id.is_empty());
    assert_eq!(v.capacity_bytes, GIB, "default size");
}

#[test]
fn create_volume_should_return_appropriate_values_single_node_writer_with_capacity_1gi() {
    let mut d = driver();
    let v = d
        .create_volume(create_req("v", GIB))
        .unwrap()
        .volume
        .unwrap();
    assert!(v.capacity_bytes >= GIB);
}

#[test]
fn create_volume_should_not_fail_when_requesting_to_create_a_volume_with_already_existing_name_and_same_capacity()
 {
    let mut d = driver();
    let a = create(&mut d, "v");
    let b = create(&mut d, "v");
    assert_eq!(a, b);
    assert_eq!(d.volumes().count(), 1);
}

#[test]
fn create_volume_should_fail_when_requesting_to_create_a_volume_with_already_existing_name_and_different_capacity()
 {
    let mut d = driver();
    let exact = |size| CreateVolumeRequest {
        capacity_range: Some(CapacityRange {
            required_bytes: size,
            limit_bytes: size,
        }),
        ..create_req("v", size)
    };
    d.create_volume(exact(SIZE)).unwrap();
    assert_code(
        d.create_volume(exact(2 * SIZE)),
        Code::AlreadyExists,
        "Volume with the same name: v but with different size already exist",
    );
}

#[test]
fn create_volume_should_not_fail_when_creating_volume_with_maximum_length_name() {
    let mut d = driver();
    let name = "N".repeat(128);
    let v = create(&mut d, &name);
    assert_eq!(d.volume(&v.volume_id).unwrap().name, name);
}

#[test]
fn create_volume_should_create_volume_from_an_existing_source_snapshot() {
    let mut d = driver();
    let src = create(&mut d, "src");
    let snap = snapshot(&mut d, "snap", &src.volume_id);
    let mut req = create_req("restored", SIZE);
    req.volume_content_source = Some(VolumeContentSource::from_snapshot(&snap.snapshot_id));
    let v = d.create_volume(req).unwrap().volume.unwrap();
    assert_eq!(
        v.content_source,
        Some(VolumeContentSource::from_snapshot(&snap.snapshot_id))
    );
    assert_eq!(v.capacity_bytes, SIZE);
}

#[test]
fn create_volume_should_fail_when_the_volume_source_snapshot_is_not_found() {
    let mut d = driver();
    let mut req = create_req("restored", SIZE);
    req.volume_content_source = Some(VolumeContentSource::from_snapshot("non-existing"));
    assert_code(
        d.create_volume(req),
        Code::NotFound,
        "snapshot id non-existing does not exist in the snapshots list",
    );
    assert_eq!(d.volumes().count(), 0);
}

#[test]
fn create_volume_should_create_volume_from_an_existing_source_volume() {
    let mut d = driver();
    let src = create(&mut d, "src");
    let mut req = create_req("clone", SIZE);
    req.volume_content_source = Some(VolumeContentSource::from_volume(&src.volume_id));
    let v = d.create_volume(req).unwrap().volume.unwrap();
    assert_ne!(v.volume_id, src.volume_id);
    assert_eq!(
        v.content_source,
        Some(VolumeContentSource::from_volume(&src.volume_id))
    );
}

#[test]
fn create_volume_should_fail_when_the_volume_source_volume_is_not_found() {
    let mut d = driver();
    let mut req = create_req("clone", SIZE);
    req.volume_content_source = Some(VolumeContentSource::from_volume("non-existing"));
    assert_code(
        d.create_volume(req),
        Code::NotFound,
        "volume id non-existing does not exist in the volumes list",
    );
}

#[test]
fn delete_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.delete_volume(Default::default()),
        Code::InvalidArgument,
        "Volume ID missing in request",
    );
}

#[test]
fn delete_volume_should_succeed_when_an_invalid_volume_id_is_used() {
    let mut d = driver();
    d.delete_volume(DeleteVolumeRequest {
        volume_id: "reallyfakevolumeid".into(),
        ..Default::default()
    })
    .unwrap();
}

#[test]
fn delete_volume_should_return_appropriate_values_no_optional_values_added() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let r = d
        .delete_volume(DeleteVolumeRequest {
            volume_id: v.volume_id.clone(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(serde_json::to_string(&r).unwrap(), "{}");
    assert!(d.volume(&v.volume_id).is_none());
}

#[test]
fn validate_volume_capabilities_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.validate_volume_capabilities(ValidateVolumeCapabilitiesRequest {
            volume_capabilities: vec![snw()],
            ..Default::default()
        }),
        Code::InvalidArgument,
        "Volume ID cannot be empty",
    );
}

#[test]
fn validate_volume_capabilities_should_fail_when_no_volume_capabilities_are_provided() {
    let mut d = driver();
    let v = create(&mut d, "v");
    // hostpath answers with the volume ID as the message.
    assert_code(
        d.validate_volume_capabilities(ValidateVolumeCapabilitiesRequest {
            volume_id: v.volume_id.clone(),
            ..Default::default()
        }),
        Code::InvalidArgument,
        &v.volume_id,
    );
}

#[test]
fn validate_volume_capabilities_should_return_appropriate_values_no_optional_values_added() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let r = d
        .validate_volume_capabilities(ValidateVolumeCapabilitiesRequest {
            volume_id: v.volume_id.clone(),
            volume_capabilities: vec![snw()],
            ..Default::default()
        })
        .unwrap();
    let confirmed = r.confirmed.expect("confirmed");
    assert!(!confirmed.volume_capabilities.is_empty());
    // A block capability on a mount volume is not confirmed.
    let r = d
        .validate_volume_capabilities(ValidateVolumeCapabilitiesRequest {
            volume_id: v.volume_id.clone(),
            volume_capabilities: vec![
                snw(),
                VolumeCapability::block(AccessModeType::SingleNodeWriter),
            ],
            ..Default::default()
        })
        .unwrap();
    assert!(r.confirmed.is_none());
    assert_eq!(
        r.message,
        format!("volume {} is a mount volume", v.volume_id)
    );
}

#[test]
fn validate_volume_capabilities_should_fail_when_the_requested_volume_does_not_exist() {
    let mut d = driver();
    assert_code(
        d.validate_volume_capabilities(ValidateVolumeCapabilitiesRequest {
            volume_id: "some-vol-id".into(),
            volume_capabilities: vec![snw()],
            ..Default::default()
        }),
        Code::NotFound,
        "volume id some-vol-id does not exist in the volumes list",
    );
}

#[test]
fn controller_publish_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.controller_publish_volume(publish_req("", "node-1")),
        Code::InvalidArgument,
        "Volume ID cannot be empty",
    );
}

#[test]
fn controller_publish_volume_should_fail_when_no_node_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.controller_publish_volume(publish_req("id", "")),
        Code::InvalidArgument,
        "Node ID cannot be empty",
    );
}

#[test]
fn controller_publish_volume_should_fail_when_no_volume_capability_is_provided() {
    let mut d = driver();
    let mut req = publish_req("id", "node-1");
    req.volume_capability = None;
    assert_code(
        d.controller_publish_volume(req),
        Code::InvalidArgument,
        "Volume Capabilities cannot be empty",
    );
}

#[test]
fn controller_publish_volume_should_fail_when_publishing_more_volumes_than_the_node_max_attach_limit()
 {
    let mut d = Driver::default();
    d.add_node("node-1", None, 2).unwrap();
    for name in ["a", "b"] {
        let v = create(&mut d, name);
        d.controller_publish_volume(publish_req(&v.volume_id, "node-1"))
            .unwrap();
    }
    let v = create(&mut d, "c");
    let before = d.clone();
    assert_code(
        d.controller_publish_volume(publish_req(&v.volume_id, "node-1")),
        Code::ResourceExhausted,
        "Cannot attach any more volumes to this node ('node-1')",
    );
    assert_eq!(d, before, "a rejected call changes nothing");
}

#[test]
fn controller_publish_volume_should_fail_when_the_volume_does_not_exist() {
    let mut d = driver();
    assert_code(
        d.controller_publish_volume(publish_req("some-vol-id", "node-1")),
        Code::NotFound,
        "volume id some-vol-id does not exist in the volumes list",
    );
}

#[test]
fn controller_publish_volume_should_fail_when_the_node_does_not_exist() {
    let mut d = driver();
    let v = create(&mut d, "v");
    assert_code(
        d.controller_publish_volume(publish_req(&v.volume_id, "some-fake-node-id")),
        Code::NotFound,
        "node id some-fake-node-id does not exist in the nodes list",
    );
}

#[test]
fn controller_publish_volume_should_fail_when_the_volume_is_already_published_but_is_incompatible()
{
    let mut d = driver();
    let v = create(&mut d, "v");
    d.controller_publish_volume(publish_req(&v.volume_id, "node-1"))
        .unwrap();
    let mut req = publish_req(&v.volume_id, "node-1");
    req.readonly = true;
    assert_code(
        d.controller_publish_volume(req),
        Code::AlreadyExists,
        "Volume published but has incompatible readonly flag",
    );
}

#[test]
fn controller_volume_lifecycle_should_work() {
    let mut d = driver();
    let info = d
        .node("node-1")
        .unwrap()
        .node_get_info(NodeGetInfoRequest {})
        .unwrap();
    let topo = info.accessible_topology.clone().unwrap();
    let mut req = create_req("lifecycle", SIZE);
    req.accessibility_requirements = Some(TopologyRequirement {
        requisite: vec![topo.clone()],
        preferred: vec![topo.clone()],
    });
    let v = d.create_volume(req).unwrap().volume.unwrap();
    assert_eq!(v.accessible_topology, vec![topo]);
    let r = d
        .controller_publish_volume(publish_req(&v.volume_id, &info.node_id))
        .unwrap();
    assert_eq!(
        r.publish_context.get("device").map(String::as_str),
        Some(format!("/dev/lab/{}", v.volume_id).as_str())
    );
    assert_eq!(
        d.lifecycle(&v.volume_id, "node-1"),
        Some(LifecycleState::NodeReady)
    );
    d.controller_unpublish_volume(ControllerUnpublishVolumeRequest {
        volume_id: v.volume_id.clone(),
        node_id: info.node_id.clone(),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        d.lifecycle(&v.volume_id, "node-1"),
        Some(LifecycleState::Created)
    );
}

#[test]
fn controller_volume_lifecycle_should_be_idempotent() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let first = d
        .controller_publish_volume(publish_req(&v.volume_id, "node-1"))
        .unwrap();
    for _ in 0..10 {
        let again = d
            .controller_publish_volume(publish_req(&v.volume_id, "node-1"))
            .unwrap();
        assert_eq!(again, first);
    }
    for _ in 0..3 {
        d.controller_unpublish_volume(ControllerUnpublishVolumeRequest {
            volume_id: v.volume_id.clone(),
            node_id: "node-1".into(),
            ..Default::default()
        })
        .unwrap();
    }
    assert!(d.volume(&v.volume_id).unwrap().attachments.is_empty());
}

#[test]
fn controller_unpublish_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.controller_unpublish_volume(ControllerUnpublishVolumeRequest {
            node_id: "node-1".into(),
            ..Default::default()
        }),
        Code::InvalidArgument,
        "Volume ID cannot be empty",
    );
}

// ------------------------------------------------------------------ Snapshots

#[test]
fn list_snapshots_should_return_appropriate_values_no_optional_values_added() {
    let mut d = driver();
    let v = create(&mut d, "v");
    snapshot(&mut d, "s", &v.volume_id);
    let r = d.list_snapshots(Default::default()).unwrap();
    assert_eq!(r.entries.len(), 1);
    let s = r.entries[0].snapshot.as_ref().unwrap();
    assert!(!s.snapshot_id.is_empty());
    assert_eq!(s.source_volume_id, v.volume_id);
    assert!(s.ready_to_use && s.creation_time.is_some());
    assert_eq!(s.size_bytes, SIZE);
}

#[test]
fn list_snapshots_should_return_snapshots_that_match_the_specified_snapshot_id() {
    let mut d = driver();
    let v = create(&mut d, "v");
    snapshot(&mut d, "s1", &v.volume_id);
    let s2 = snapshot(&mut d, "s2", &v.volume_id);
    let r = d
        .list_snapshots(ListSnapshotsRequest {
            snapshot_id: s2.snapshot_id.clone(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.entries[0].snapshot.as_ref(), Some(&s2));
}

#[test]
fn list_snapshots_should_return_empty_when_the_specified_snapshot_id_does_not_exist() {
    let mut d = driver();
    let r = d
        .list_snapshots(ListSnapshotsRequest {
            snapshot_id: "none-exist-id".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(r.entries.is_empty());
}

#[test]
fn list_snapshots_should_return_snapshots_that_match_the_specified_source_volume_id() {
    let mut d = driver();
    let a = create(&mut d, "a");
    let b = create(&mut d, "b");
    snapshot(&mut d, "sa", &a.volume_id);
    snapshot(&mut d, "sb", &b.volume_id);
    let r = d
        .list_snapshots(ListSnapshotsRequest {
            source_volume_id: b.volume_id.clone(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.entries.len(), 1);
    assert_eq!(
        r.entries[0].snapshot.as_ref().unwrap().source_volume_id,
        b.volume_id
    );
}

#[test]
fn list_snapshots_should_return_empty_when_the_specified_source_volume_id_does_not_exist() {
    let mut d = driver();
    let r = d
        .list_snapshots(ListSnapshotsRequest {
            source_volume_id: "none-exist-volume-id".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(r.entries.is_empty());
}

#[test]
fn list_snapshots_check_the_presence_of_new_snapshots_in_the_snapshot_list() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let before = d.list_snapshots(Default::default()).unwrap().entries.len();
    let s = snapshot(&mut d, "s", &v.volume_id);
    let list = d.list_snapshots(Default::default()).unwrap().entries;
    assert_eq!(list.len(), before + 1);
    assert!(list.iter().any(|e| e.snapshot.as_ref() == Some(&s)));
    d.delete_snapshot(DeleteSnapshotRequest {
        snapshot_id: s.snapshot_id,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        d.list_snapshots(Default::default()).unwrap().entries.len(),
        before
    );
}

#[test]
fn list_snapshots_should_return_next_token_when_a_limited_number_of_entries_are_requested() {
    let mut d = driver();
    let v = create(&mut d, "v");
    for i in 0..5 {
        snapshot(&mut d, &format!("s{i}"), &v.volume_id);
    }
    let r = d
        .list_snapshots(ListSnapshotsRequest {
            max_entries: 2,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.entries.len(), 2);
    assert_eq!(r.next_token, "2");
    let mut total = r.entries.len();
    let mut token = r.next_token;
    while !token.is_empty() {
        let r = d
            .list_snapshots(ListSnapshotsRequest {
                starting_token: token,
                ..Default::default()
            })
            .unwrap();
        total += r.entries.len();
        token = r.next_token;
    }
    assert_eq!(total, 5);
    assert_code(
        d.list_snapshots(ListSnapshotsRequest {
            starting_token: "abc".into(),
            ..Default::default()
        }),
        Code::Aborted,
        "startingToken=0 !< int32=4294967295",
    );
    assert_code(
        d.list_snapshots(ListSnapshotsRequest {
            starting_token: "9".into(),
            ..Default::default()
        }),
        Code::Aborted,
        "startingToken=9 > len(snapshots)=5",
    );
}

#[test]
fn delete_snapshot_should_fail_when_no_snapshot_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.delete_snapshot(Default::default()),
        Code::InvalidArgument,
        "Snapshot ID missing in request",
    );
}

#[test]
fn delete_snapshot_should_succeed_when_an_invalid_snapshot_id_is_used() {
    let mut d = driver();
    d.delete_snapshot(DeleteSnapshotRequest {
        snapshot_id: "reallyfakesnapshotid".into(),
        ..Default::default()
    })
    .unwrap();
}

#[test]
fn delete_snapshot_should_return_appropriate_values_no_optional_values_added() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let s = snapshot(&mut d, "s", &v.volume_id);
    let r = d
        .delete_snapshot(DeleteSnapshotRequest {
            snapshot_id: s.snapshot_id,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(serde_json::to_string(&r).unwrap(), "{}");
    assert_eq!(d.snapshots().count(), 0);
}

#[test]
fn create_snapshot_should_fail_when_no_name_is_provided() {
    let mut d = driver();
    let v = create(&mut d, "v");
    assert_code(
        d.create_snapshot(CreateSnapshotRequest {
            source_volume_id: v.volume_id,
            ..Default::default()
        }),
        Code::InvalidArgument,
        "Name missing in request",
    );
}

#[test]
fn create_snapshot_should_fail_when_no_source_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.create_snapshot(CreateSnapshotRequest {
            name: "name".into(),
            ..Default::default()
        }),
        Code::InvalidArgument,
        "SourceVolumeId missing in request",
    );
}

#[test]
fn create_snapshot_should_succeed_when_requesting_to_create_a_snapshot_with_already_existing_name_and_same_source_volume_id()
 {
    let mut d = driver();
    let v = create(&mut d, "v");
    let a = snapshot(&mut d, "s", &v.volume_id);
    d.set_clock(100);
    let b = snapshot(&mut d, "s", &v.volume_id);
    assert_eq!(a, b);
}

#[test]
fn create_snapshot_should_fail_when_requesting_to_create_a_snapshot_with_already_existing_name_and_different_source_volume_id()
 {
    let mut d = driver();
    let a = create(&mut d, "a");
    let b = create(&mut d, "b");
    snapshot(&mut d, "s", &a.volume_id);
    assert_code(
        d.create_snapshot(CreateSnapshotRequest {
            name: "s".into(),
            source_volume_id: b.volume_id,
            ..Default::default()
        }),
        Code::AlreadyExists,
        "snapshot with the same name: s but with different SourceVolumeId already exist",
    );
}

#[test]
fn create_snapshot_should_succeed_when_creating_snapshot_with_maximum_length_name() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let s = snapshot(&mut d, &"S".repeat(128), &v.volume_id);
    assert!(s.snapshot_id.starts_with("snap-"));
}

#[test]
fn expand_volume_should_fail_if_no_volume_id_is_given() {
    let mut d = driver();
    assert_code(
        d.controller_expand_volume(ControllerExpandVolumeRequest {
            capacity_range: Some(CapacityRange {
                required_bytes: SIZE,
                limit_bytes: 0,
            }),
            ..Default::default()
        }),
        Code::InvalidArgument,
        "Volume ID missing in request",
    );
}

#[test]
fn expand_volume_should_fail_if_no_capacity_range_is_given() {
    let mut d = driver();
    let v = create(&mut d, "v");
    assert_code(
        d.controller_expand_volume(ControllerExpandVolumeRequest {
            volume_id: v.volume_id,
            ..Default::default()
        }),
        Code::InvalidArgument,
        "Capacity range not provided",
    );
}

#[test]
fn expand_volume_should_work() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let r = d
        .controller_expand_volume(ControllerExpandVolumeRequest {
            volume_id: v.volume_id.clone(),
            capacity_range: Some(CapacityRange {
                required_bytes: SIZE + GIB,
                limit_bytes: 0,
            }),
            ..Default::default()
        })
        .unwrap();
    assert!(r.capacity_bytes >= SIZE + GIB);
    assert!(r.node_expansion_required);
}

// ------------------------------------------------------------------ Node Service

/// Creates, attaches and stages a volume on node-1 (the sanity "publish" setup).
fn staged(d: &mut Driver, name: &str, mode: AccessModeType) -> (String, StringMap) {
    let mut req = create_req(name, SIZE);
    req.volume_capabilities = vec![cap(mode)];
    let v = d.create_volume(req).unwrap().volume.unwrap();
    let mut p = publish_req(&v.volume_id, "node-1");
    p.volume_capability = Some(cap(mode));
    let ctx = d.controller_publish_volume(p).unwrap().publish_context;
    d.node("node-1")
        .unwrap()
        .node_stage_volume(NodeStageVolumeRequest {
            volume_id: v.volume_id.clone(),
            publish_context: ctx.clone(),
            staging_target_path: "/staging".into(),
            volume_capability: Some(cap(mode)),
            ..Default::default()
        })
        .unwrap();
    (v.volume_id, ctx)
}

fn node_publish(vol: &str, target: &str, mode: AccessModeType) -> NodePublishVolumeRequest {
    NodePublishVolumeRequest {
        volume_id: vol.into(),
        staging_target_path: "/staging".into(),
        target_path: target.into(),
        volume_capability: Some(cap(mode)),
        ..Default::default()
    }
}

#[test]
fn node_get_capabilities_should_return_appropriate_capabilities() {
    let mut d = driver();
    let r = d
        .node("node-1")
        .unwrap()
        .node_get_capabilities(NodeGetCapabilitiesRequest {})
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::json!({"capabilities": [
            {"rpc": {"type": "STAGE_UNSTAGE_VOLUME"}},
            {"rpc": {"type": "GET_VOLUME_STATS"}},
            {"rpc": {"type": "EXPAND_VOLUME"}},
            {"rpc": {"type": "SINGLE_NODE_MULTI_WRITER"}}
        ]})
    );
}

#[test]
fn node_get_info_should_return_appropriate_values() {
    let mut d = driver();
    let r = d
        .node("node-2")
        .unwrap()
        .node_get_info(NodeGetInfoRequest {})
        .unwrap();
    assert_eq!(r.node_id, "node-2");
    assert_eq!(r.max_volumes_per_node, 16);
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::json!({
            "node_id": "node-2",
            "max_volumes_per_node": "16",
            "accessible_topology": {"segments": {
                "topology.hostpath.csi.lab/node": "node-2",
                "topology.kubernetes.io/zone": "zone-2"
            }}
        })
    );
}

#[test]
fn node_publish_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    let mut req = node_publish("", "/target", AccessModeType::SingleNodeWriter);
    req.volume_id.clear();
    assert_code(
        d.node("node-1").unwrap().node_publish_volume(req),
        Code::InvalidArgument,
        "Volume ID missing in request",
    );
}

#[test]
fn node_publish_volume_should_fail_when_no_target_path_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1").unwrap().node_publish_volume(node_publish(
            "id",
            "",
            AccessModeType::SingleNodeWriter,
        )),
        Code::InvalidArgument,
        "Target path missing in request",
    );
}

#[test]
fn node_publish_volume_should_fail_when_no_volume_capability_is_provided() {
    let mut d = driver();
    let mut req = node_publish("id", "/target", AccessModeType::SingleNodeWriter);
    req.volume_capability = None;
    assert_code(
        d.node("node-1").unwrap().node_publish_volume(req),
        Code::InvalidArgument,
        "Volume capability missing in request",
    );
}

#[test]
fn node_publish_volume_should_fail_when_volume_with_single_node_single_writer_access_mode_is_already_mounted_at_a_different_target_path()
 {
    let mut d = driver();
    let mode = AccessModeType::SingleNodeSingleWriter;
    let (vol, _) = staged(&mut d, "v", mode);
    let mut n = d.node("node-1").unwrap();
    n.node_publish_volume(node_publish(&vol, "/target-1", mode))
        .unwrap();
    assert_code(
        n.node_publish_volume(node_publish(&vol, "/target-2", mode)),
        Code::FailedPrecondition,
        ACCESS_MODE_CONFLICT,
    );
}

#[test]
fn node_unpublish_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_unpublish_volume(NodeUnpublishVolumeRequest {
                volume_id: String::new(),
                target_path: "/target".into(),
            }),
        Code::InvalidArgument,
        "Volume ID missing in request",
    );
}

#[test]
fn node_unpublish_volume_should_fail_when_no_target_path_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_unpublish_volume(NodeUnpublishVolumeRequest {
                volume_id: "id".into(),
                target_path: String::new(),
            }),
        Code::InvalidArgument,
        "Target path missing in request",
    );
}

#[test]
fn node_unpublish_volume_should_remove_target_path() {
    let mut d = driver();
    let mode = AccessModeType::SingleNodeWriter;
    let (vol, _) = staged(&mut d, "v", mode);
    let mut n = d.node("node-1").unwrap();
    n.node_publish_volume(node_publish(&vol, "/target", mode))
        .unwrap();
    assert_eq!(d.volume(&vol).unwrap().targets_on("node-1"), ["/target"]);
    d.node("node-1")
        .unwrap()
        .node_unpublish_volume(NodeUnpublishVolumeRequest {
            volume_id: vol.clone(),
            target_path: "/target".into(),
        })
        .unwrap();
    assert!(d.volume(&vol).unwrap().targets_on("node-1").is_empty());
}

#[test]
fn node_stage_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_stage_volume(NodeStageVolumeRequest {
                staging_target_path: "/staging".into(),
                volume_capability: Some(snw()),
                ..Default::default()
            }),
        Code::InvalidArgument,
        "Volume ID missing in request",
    );
}

#[test]
fn node_stage_volume_should_fail_when_no_staging_target_path_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_stage_volume(NodeStageVolumeRequest {
                volume_id: "id".into(),
                volume_capability: Some(snw()),
                ..Default::default()
            }),
        Code::InvalidArgument,
        "Target path missing in request",
    );
}

#[test]
fn node_stage_volume_should_fail_when_no_volume_capability_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_stage_volume(NodeStageVolumeRequest {
                volume_id: "id".into(),
                staging_target_path: "/staging".into(),
                ..Default::default()
            }),
        Code::InvalidArgument,
        "Volume Capability missing in request",
    );
}

#[test]
fn node_unstage_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_unstage_volume(NodeUnstageVolumeRequest {
                volume_id: String::new(),
                staging_target_path: "/staging".into(),
            }),
        Code::InvalidArgument,
        "Volume ID missing in request",
    );
}

#[test]
fn node_unstage_volume_should_fail_when_no_staging_target_path_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_unstage_volume(NodeUnstageVolumeRequest {
                volume_id: "id".into(),
                staging_target_path: String::new(),
            }),
        Code::InvalidArgument,
        "Target path missing in request",
    );
}

#[test]
fn node_get_volume_stats_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_get_volume_stats(NodeGetVolumeStatsRequest {
                volume_path: "/target".into(),
                ..Default::default()
            }),
        Code::InvalidArgument,
        "Volume ID not provided",
    );
}

#[test]
fn node_get_volume_stats_should_fail_when_no_volume_path_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_get_volume_stats(NodeGetVolumeStatsRequest {
                volume_id: "id".into(),
                ..Default::default()
            }),
        Code::InvalidArgument,
        "Volume Path not provided",
    );
}

#[test]
fn node_get_volume_stats_should_fail_when_volume_is_not_found() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_get_volume_stats(NodeGetVolumeStatsRequest {
                volume_id: "id".into(),
                volume_path: "some/path".into(),
                ..Default::default()
            }),
        Code::NotFound,
        "volume id id does not exist in the volumes list",
    );
}

#[test]
fn node_get_volume_stats_should_fail_when_volume_does_not_exist_on_the_specified_path() {
    let mut d = driver();
    let mode = AccessModeType::SingleNodeWriter;
    let (vol, _) = staged(&mut d, "v", mode);
    let mut n = d.node("node-1").unwrap();
    n.node_publish_volume(node_publish(&vol, "/target", mode))
        .unwrap();
    assert_code(
        n.node_get_volume_stats(NodeGetVolumeStatsRequest {
            volume_id: vol,
            volume_path: "some/path".into(),
            ..Default::default()
        }),
        Code::NotFound,
        "Could not get file information from some/path: stat some/path: no such file or directory",
    );
}

#[test]
fn node_expand_volume_should_fail_when_no_volume_id_is_provided() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_expand_volume(NodeExpandVolumeRequest {
                volume_path: "/target".into(),
                ..Default::default()
            }),
        Code::InvalidArgument,
        "Volume ID not provided",
    );
}

#[test]
fn node_expand_volume_should_fail_when_no_volume_path_is_provided() {
    let mut d = driver();
    let v = create(&mut d, "v");
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_expand_volume(NodeExpandVolumeRequest {
                volume_id: v.volume_id,
                ..Default::default()
            }),
        Code::InvalidArgument,
        "Volume path not provided",
    );
}

#[test]
fn node_expand_volume_should_fail_when_volume_is_not_found() {
    let mut d = driver();
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_expand_volume(NodeExpandVolumeRequest {
                volume_id: "id".into(),
                volume_path: "/target".into(),
                ..Default::default()
            }),
        Code::NotFound,
        "volume id id does not exist in the volumes list",
    );
}

#[test]
fn node_expand_volume_should_work_if_node_expand_is_called_after_node_publish() {
    let mut d = driver();
    let mode = AccessModeType::SingleNodeWriter;
    let (vol, _) = staged(&mut d, "v", mode);
    d.node("node-1")
        .unwrap()
        .node_publish_volume(node_publish(&vol, "/target", mode))
        .unwrap();
    let grown = SIZE + GIB;
    let r = d
        .controller_expand_volume(ControllerExpandVolumeRequest {
            volume_id: vol.clone(),
            capacity_range: Some(CapacityRange {
                required_bytes: grown,
                limit_bytes: 0,
            }),
            ..Default::default()
        })
        .unwrap();
    assert!(r.node_expansion_required);
    let stats = |d: &mut Driver| {
        d.node("node-1")
            .unwrap()
            .node_get_volume_stats(NodeGetVolumeStatsRequest {
                volume_id: vol.clone(),
                volume_path: "/target".into(),
                ..Default::default()
            })
            .unwrap()
            .usage[0]
            .total
    };
    assert_eq!(
        stats(&mut d),
        SIZE,
        "the disk grew but the filesystem did not"
    );
    let r = d
        .node("node-1")
        .unwrap()
        .node_expand_volume(NodeExpandVolumeRequest {
            volume_id: vol.clone(),
            volume_path: "/target".into(),
            capacity_range: Some(CapacityRange {
                required_bytes: grown,
                limit_bytes: 0,
            }),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.capacity_bytes, grown);
    assert_eq!(stats(&mut d), grown);
}

/// The sanity "should work" sequence; `repeat` > 1 is "should be idempotent".
fn node_lifecycle(repeat: usize) {
    let mut d = driver();
    let info = d
        .node("node-1")
        .unwrap()
        .node_get_info(NodeGetInfoRequest {})
        .unwrap();
    let topo = info.accessible_topology.clone().unwrap();
    let mut req = create_req("sanity-node-full", SIZE);
    req.accessibility_requirements = Some(TopologyRequirement {
        requisite: vec![topo.clone()],
        preferred: vec![topo],
    });
    let vol = d.create_volume(req).unwrap().volume.unwrap().volume_id;
    let ctx = d
        .controller_publish_volume(publish_req(&vol, &info.node_id))
        .unwrap()
        .publish_context;
    assert_eq!(d.lifecycle(&vol, "node-1"), Some(LifecycleState::NodeReady));
    let mut n = d.node("node-1").unwrap();
    for _ in 0..repeat {
        n.node_stage_volume(NodeStageVolumeRequest {
            volume_id: vol.clone(),
            publish_context: ctx.clone(),
            staging_target_path: "/staging".into(),
            volume_capability: Some(snw()),
            ..Default::default()
        })
        .unwrap();
    }
    assert_eq!(d.lifecycle(&vol, "node-1"), Some(LifecycleState::VolReady));
    let mut n = d.node("node-1").unwrap();
    for _ in 0..repeat {
        let mut p = node_publish(&vol, "/target", AccessModeType::SingleNodeWriter);
        p.publish_context = ctx.clone();
        n.node_publish_volume(p).unwrap();
    }
    assert_eq!(d.lifecycle(&vol, "node-1"), Some(LifecycleState::Published));
    assert_eq!(d.lifecycle(&vol, "node-2"), Some(LifecycleState::Created));
    let mut n = d.node("node-1").unwrap();
    let stats = n
        .node_get_volume_stats(NodeGetVolumeStatsRequest {
            volume_id: vol.clone(),
            volume_path: "/target".into(),
            ..Default::default()
        })
        .unwrap();
    // BYTES and INODES, as hostpath reports them from statfs (an empty ext4: 11 inodes used).
    assert_eq!(
        stats.usage,
        vec![
            VolumeUsage {
                available: SIZE,
                total: SIZE,
                used: 0,
                unit: UsageUnit::Bytes
            },
            VolumeUsage {
                available: SIZE / 16384 - 11,
                total: SIZE / 16384,
                used: 11,
                unit: UsageUnit::Inodes
            }
        ]
    );
    // Cleanup, LIFO.
    n.node_unpublish_volume(NodeUnpublishVolumeRequest {
        volume_id: vol.clone(),
        target_path: "/target".into(),
    })
    .unwrap();
    n.node_unstage_volume(NodeUnstageVolumeRequest {
        volume_id: vol.clone(),
        staging_target_path: "/staging".into(),
    })
    .unwrap();
    assert_eq!(d.lifecycle(&vol, "node-1"), Some(LifecycleState::NodeReady));
    d.controller_unpublish_volume(ControllerUnpublishVolumeRequest {
        volume_id: vol.clone(),
        node_id: info.node_id,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(d.lifecycle(&vol, "node-1"), Some(LifecycleState::Created));
    d.delete_volume(DeleteVolumeRequest {
        volume_id: vol.clone(),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(d.lifecycle(&vol, "node-1"), None);
    assert_eq!(
        d.get_capacity(Default::default())
            .unwrap()
            .available_capacity,
        100 << 40
    );
}

#[test]
fn node_should_work() {
    node_lifecycle(1);
}

#[test]
fn node_should_be_idempotent() {
    node_lifecycle(10);
}

// ------------------------------------------------------------------ Beyond the checklist

#[test]
fn create_volume_argument_errors_match_hostpath() {
    let mut d = driver();
    let mut both = create_req("v", SIZE);
    both.volume_capabilities
        .push(VolumeCapability::block(AccessModeType::SingleNodeWriter));
    assert_code(
        d.create_volume(both),
        Code::InvalidArgument,
        "cannot have both block and mount access type",
    );
    let mut neg = create_req("v", SIZE);
    neg.capacity_range = Some(CapacityRange {
        required_bytes: -1,
        limit_bytes: 0,
    });
    assert_code(
        d.create_volume(neg),
        Code::InvalidArgument,
        "cannot have negative capacity",
    );
    let mut over = create_req("v", SIZE);
    over.capacity_range = Some(CapacityRange {
        required_bytes: 2 * SIZE,
        limit_bytes: SIZE,
    });
    assert_code(
        d.create_volume(over),
        Code::InvalidArgument,
        "capacity cannot exceed limit",
    );
    assert_code(
        d.create_volume(create_req("huge", 2 << 40)),
        Code::OutOfRange,
        "Requested capacity 2199023255552 exceeds maximum allowed 1099511627776",
    );
    let mut mutable = create_req("v", SIZE);
    mutable
        .mutable_parameters
        .insert("iops".into(), "100".into());
    assert_code(
        d.create_volume(mutable),
        Code::InvalidArgument,
        "unsupported capability MODIFY_VOLUME",
    );
    assert_eq!(d.volumes().count(), 0);
}

#[test]
fn create_volume_from_a_bigger_snapshot_is_out_of_range() {
    let mut d = driver();
    let src = create(&mut d, "src");
    let snap = snapshot(&mut d, "snap", &src.volume_id);
    let mut req = create_req("small", GIB);
    req.volume_content_source = Some(VolumeContentSource::from_snapshot(&snap.snapshot_id));
    assert_code(
        d.create_volume(req),
        Code::OutOfRange,
        &format!(
            "snapshot {} size {SIZE} is greater than requested volume size {GIB}",
            snap.snapshot_id
        ),
    );
    // Without a capacity range the restored volume takes the snapshot's size.
    let mut req = create_req("same", 0);
    req.volume_content_source = Some(VolumeContentSource::from_snapshot(&snap.snapshot_id));
    assert_eq!(
        d.create_volume(req).unwrap().volume.unwrap().capacity_bytes,
        SIZE
    );
}

#[test]
fn create_volume_same_name_other_source_is_already_exists() {
    let mut d = driver();
    let a = create(&mut d, "a");
    let snap = snapshot(&mut d, "s", &a.volume_id);
    create(&mut d, "v");
    let mut req = create_req("v", SIZE);
    req.volume_content_source = Some(VolumeContentSource::from_snapshot(&snap.snapshot_id));
    assert_code(
        d.create_volume(req),
        Code::AlreadyExists,
        "existing volume source snapshot id not matching",
    );
}

#[test]
fn create_volume_exhausts_total_capacity() {
    let mut d = Driver::new(DriverConfig {
        total_capacity: 15 * GIB,
        ..DriverConfig::default()
    });
    create(&mut d, "a");
    assert_code(
        d.create_volume(create_req("b", SIZE)),
        Code::ResourceExhausted,
        "requested capacity 10737418240 exceeds remaining capacity, 10Gi out of 15Gi already used",
    );
}

#[test]
fn create_volume_picks_topology_preferred_first() {
    let mut d = driver();
    let zone = |z: &str| Topology {
        segments: [("topology.kubernetes.io/zone".to_string(), z.to_string())]
            .into_iter()
            .collect(),
    };
    let mut req = create_req("v", SIZE);
    req.accessibility_requirements = Some(TopologyRequirement {
        requisite: vec![zone("zone-1"), zone("zone-2")],
        preferred: vec![zone("zone-2")],
    });
    let v = d.create_volume(req).unwrap().volume.unwrap();
    assert_eq!(
        v.accessible_topology[0].segments["topology.hostpath.csi.lab/node"],
        "node-2"
    );
    let mut req = create_req("w", SIZE);
    req.accessibility_requirements = Some(TopologyRequirement {
        requisite: vec![zone("zone-9")],
        preferred: vec![],
    });
    assert_eq!(err(d.create_volume(req)).code, Code::ResourceExhausted);
}

#[test]
fn volume_ids_are_deterministic() {
    let mut a = driver();
    let mut b = driver();
    assert_eq!(create(&mut a, "pvc-1"), create(&mut b, "pvc-1"));
    assert_ne!(
        create(&mut a, "pvc-2").volume_id,
        create(&mut a, "pvc-3").volume_id
    );
}

#[test]
fn delete_volume_in_use_is_failed_precondition() {
    let mut d = driver();
    let (vol, _) = staged(&mut d, "v", AccessModeType::SingleNodeWriter);
    let before = d.clone();
    assert_code(
        d.delete_volume(DeleteVolumeRequest {
            volume_id: vol.clone(),
            ..Default::default()
        }),
        Code::FailedPrecondition,
        &format!(
            "Volume '{vol}' is still used (attached: true, staged: [/staging], published: []) by 'node-1' node"
        ),
    );
    assert_eq!(d, before);
}

#[test]
fn every_access_mode_is_provisioned_on_one_node_as_hostpath_does() {
    // csi-driver-host-path's CreateVolume checks only that block and mount are not both
    // asked for: a multi-node writer with a filesystem is created, and like every volume it
    // lives on the node CreateVolume picks, so ControllerPublish elsewhere is NOT_FOUND.
    let mut d = driver();
    let node_1 = d
        .nodes()
        .find(|n| n.node_id == "node-1")
        .unwrap()
        .segments
        .clone();
    let node_2 = d
        .nodes()
        .find(|n| n.node_id == "node-2")
        .unwrap()
        .segments
        .clone();
    let requirement = TopologyRequirement {
        requisite: vec![
            Topology {
                segments: node_1.clone(),
            },
            Topology { segments: node_2 },
        ],
        preferred: vec![Topology {
            segments: node_1.clone(),
        }],
    };
    for (name, mode, block) in [
        ("rwx-fs", AccessModeType::MultiNodeMultiWriter, false),
        ("mnsw-fs", AccessModeType::MultiNodeSingleWriter, false),
        ("rox-fs", AccessModeType::MultiNodeReaderOnly, false),
        ("rwx-block", AccessModeType::MultiNodeMultiWriter, true),
    ] {
        let c = if block {
            VolumeCapability {
                block: Some(BlockVolume {}),
                mount: None,
                access_mode: Some(AccessMode { mode }),
            }
        } else {
            cap(mode)
        };
        let mut req = create_req(name, SIZE);
        req.volume_capabilities = vec![c.clone()];
        req.accessibility_requirements = Some(requirement.clone());
        let v = d.create_volume(req).unwrap().volume.unwrap();
        assert_eq!(
            v.accessible_topology,
            [Topology {
                segments: node_1.clone()
            }],
            "{name} lives on one node"
        );
        let mut p = publish_req(&v.volume_id, "node-1");
        p.volume_capability = Some(c.clone());
        d.controller_publish_volume(p).unwrap();
        let mut p = publish_req(&v.volume_id, "node-2");
        p.volume_capability = Some(c);
        assert_code(
            d.controller_publish_volume(p),
            Code::NotFound,
            "Not matching Node ID node-2 to hostpath Node ID node-1",
        );
    }
}

#[test]
fn controller_publish_to_a_second_node_needs_multi_node() {
    let mut d = driver();
    let v = create(&mut d, "v");
    d.controller_publish_volume(publish_req(&v.volume_id, "node-1"))
        .unwrap();
    assert_code(
        d.controller_publish_volume(publish_req(&v.volume_id, "node-2")),
        Code::FailedPrecondition,
        &format!(
            "Volume '{}' is already published to node 'node-1' and access mode SINGLE_NODE_WRITER does not allow publishing to another node",
            v.volume_id
        ),
    );
    // A volume without topology (created with no requirements) is reachable from every
    // node, and a multi-node mode may be published to two of them.
    let block = || VolumeCapability {
        block: Some(BlockVolume {}),
        mount: None,
        access_mode: Some(AccessMode {
            mode: AccessModeType::MultiNodeMultiWriter,
        }),
    };
    let mut req = create_req("rwx", SIZE);
    req.volume_capabilities = vec![block()];
    let rwx = d.create_volume(req).unwrap().volume.unwrap();
    for node in ["node-1", "node-2"] {
        let mut p = publish_req(&rwx.volume_id, node);
        p.volume_capability = Some(block());
        d.controller_publish_volume(p).unwrap();
    }
    let r = d.controller_get_volume(ControllerGetVolumeRequest {
        volume_id: rwx.volume_id.clone(),
    });
    assert_eq!(
        r.unwrap().status.unwrap().published_node_ids,
        ["node-1", "node-2"]
    );
    // Empty node_id unpublishes from every node.
    d.controller_unpublish_volume(ControllerUnpublishVolumeRequest {
        volume_id: rwx.volume_id.clone(),
        ..Default::default()
    })
    .unwrap();
    assert!(d.volume(&rwx.volume_id).unwrap().attachments.is_empty());
}

#[test]
fn node_stage_requires_controller_publish() {
    let mut d = driver();
    let v = create(&mut d, "v");
    assert_code(
        d.node("node-1")
            .unwrap()
            .node_stage_volume(NodeStageVolumeRequest {
                volume_id: v.volume_id.clone(),
                staging_target_path: "/staging".into(),
                volume_capability: Some(snw()),
                ..Default::default()
            }),
        Code::Internal,
        &format!(
            "ControllerPublishVolume must be called on volume '{}' before staging on node",
            v.volume_id
        ),
    );
}

#[test]
fn node_stage_at_another_path_or_with_other_capability_fails() {
    let mut d = driver();
    let (vol, _) = staged(&mut d, "v", AccessModeType::SingleNodeWriter);
    let mut n = d.node("node-1").unwrap();
    let stage = |path: &str, c: VolumeCapability| NodeStageVolumeRequest {
        volume_id: vol.clone(),
        staging_target_path: path.into(),
        volume_capability: Some(c),
        ..Default::default()
    };
    assert_code(
        n.node_stage_volume(stage("/other", snw())),
        Code::FailedPrecondition,
        &format!("volume {vol:?} is already staged at [/staging]"),
    );
    assert_eq!(
        err(n.node_stage_volume(stage("/staging", cap(AccessModeType::MultiNodeMultiWriter)))).code,
        Code::AlreadyExists
    );
    n.node_stage_volume(stage("/staging", snw())).unwrap();
}

#[test]
fn node_publish_needs_staging_at_the_same_path() {
    let mut d = driver();
    let v = create(&mut d, "v");
    d.controller_publish_volume(publish_req(&v.volume_id, "node-1"))
        .unwrap();
    let mode = AccessModeType::SingleNodeWriter;
    let mut n = d.node("node-1").unwrap();
    assert_code(
        n.node_publish_volume(node_publish(&v.volume_id, "/t", mode)),
        Code::FailedPrecondition,
        &format!("volume {:?} must be staged before publishing", v.volume_id),
    );
    let mut no_staging = node_publish(&v.volume_id, "/t", mode);
    no_staging.staging_target_path.clear();
    assert_code(
        n.node_publish_volume(no_staging),
        Code::FailedPrecondition,
        "Staging target path missing in request",
    );
    n.node_stage_volume(NodeStageVolumeRequest {
        volume_id: v.volume_id.clone(),
        staging_target_path: "/staging".into(),
        volume_capability: Some(snw()),
        ..Default::default()
    })
    .unwrap();
    let mut elsewhere = node_publish(&v.volume_id, "/t", mode);
    elsewhere.staging_target_path = "/other".into();
    assert_code(
        n.node_publish_volume(elsewhere),
        Code::InvalidArgument,
        &format!(
            "volume {:?} was staged at [/staging], not \"/other\"",
            v.volume_id
        ),
    );
    let block = NodePublishVolumeRequest {
        volume_capability: Some(VolumeCapability::block(mode)),
        ..node_publish(&v.volume_id, "/t", mode)
    };
    assert_code(
        n.node_publish_volume(block),
        Code::InvalidArgument,
        "cannot publish a non-block volume as block volume",
    );
}

#[test]
fn node_unstage_while_published_is_internal() {
    let mut d = driver();
    let mode = AccessModeType::SingleNodeWriter;
    let (vol, _) = staged(&mut d, "v", mode);
    let mut n = d.node("node-1").unwrap();
    n.node_publish_volume(node_publish(&vol, "/target", mode))
        .unwrap();
    assert_code(
        n.node_unstage_volume(NodeUnstageVolumeRequest {
            volume_id: vol.clone(),
            staging_target_path: "/staging".into(),
        }),
        Code::Internal,
        &format!("volume {vol:?} is still published at [\"/target\"] on node \"node-1\""),
    );
    // Not staged at that path → OK, nothing changes.
    n.node_unstage_volume(NodeUnstageVolumeRequest {
        volume_id: vol.clone(),
        staging_target_path: "/elsewhere".into(),
    })
    .unwrap();
    assert_eq!(d.lifecycle(&vol, "node-1"), Some(LifecycleState::Published));
    // ControllerUnpublish while staged/published is refused too.
    assert_eq!(
        err(
            d.controller_unpublish_volume(ControllerUnpublishVolumeRequest {
                volume_id: vol,
                node_id: "node-1".into(),
                ..Default::default()
            })
        )
        .code,
        Code::Internal
    );
}

#[test]
fn driver_without_staging_publishes_directly() {
    let mut d = Driver::new(DriverConfig::without_staging());
    d.add_node_default("node-1", None).unwrap();
    let v = create(&mut d, "v");
    let mut n = d.node("node-1").unwrap();
    assert_eq!(
        err(n.node_stage_volume(NodeStageVolumeRequest::default())).code,
        Code::Unimplemented
    );
    let mut req = node_publish(&v.volume_id, "/t", AccessModeType::SingleNodeWriter);
    req.staging_target_path.clear();
    assert_eq!(err(n.node_publish_volume(req.clone())).code, Code::Internal);
    d.controller_publish_volume(publish_req(&v.volume_id, "node-1"))
        .unwrap();
    d.node("node-1").unwrap().node_publish_volume(req).unwrap();
    assert_eq!(
        d.lifecycle(&v.volume_id, "node-1"),
        Some(LifecycleState::Published)
    );
}

#[test]
fn unsupported_rpcs_are_unimplemented() {
    let mut d = Driver::new(DriverConfig::without_attach());
    d.add_node_default("node-1", None).unwrap();
    assert_code(
        d.controller_publish_volume(publish_req("v", "node-1")),
        Code::Unimplemented,
        "ControllerPublishVolume is not supported",
    );
    // Without attach, NodeStage needs no ControllerPublish.
    let v = create(&mut d, "v");
    d.node("node-1")
        .unwrap()
        .node_stage_volume(NodeStageVolumeRequest {
            volume_id: v.volume_id.clone(),
            staging_target_path: "/s".into(),
            volume_capability: Some(snw()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        d.lifecycle(&v.volume_id, "node-1"),
        Some(LifecycleState::VolReady)
    );
}

#[test]
fn controller_expand_smaller_is_ok_and_over_max_is_out_of_range() {
    let mut d = driver();
    let v = create(&mut d, "v");
    let expand = |size| ControllerExpandVolumeRequest {
        volume_id: v.volume_id.clone(),
        capacity_range: Some(CapacityRange {
            required_bytes: size,
            limit_bytes: 0,
        }),
        ..Default::default()
    };
    let r = d.controller_expand_volume(expand(GIB)).unwrap();
    assert_eq!(r.capacity_bytes, SIZE);
    assert!(!r.node_expansion_required);
    assert_code(
        d.controller_expand_volume(expand(2 << 40)),
        Code::OutOfRange,
        "Requested capacity 2199023255552 exceeds maximum allowed 1099511627776",
    );
    assert_code(
        d.controller_expand_volume(ControllerExpandVolumeRequest {
            volume_id: "nope".into(),
            ..expand(SIZE)
        }),
        Code::NotFound,
        "volume id nope does not exist in the volumes list",
    );
}

#[test]
fn block_volumes_need_no_node_expansion() {
    let mut d = driver();
    let mut req = create_req("b", SIZE);
    req.volume_capabilities = vec![VolumeCapability::block(AccessModeType::SingleNodeWriter)];
    let v = d.create_volume(req).unwrap().volume.unwrap();
    let r = d
        .controller_expand_volume(ControllerExpandVolumeRequest {
            volume_id: v.volume_id,
            capacity_range: Some(CapacityRange {
                required_bytes: 2 * SIZE,
                limit_bytes: 0,
            }),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.capacity_bytes, 2 * SIZE);
    assert!(!r.node_expansion_required);
}

#[test]
fn single_node_use_on_one_node_blocks_a_second_node() {
    // Found by the property test: attached as MULTI_NODE_READER_ONLY, staged as
    // SINGLE_NODE_WRITER, then attached to a second node.
    let mut d = driver();
    let multi = cap(AccessModeType::MultiNodeReaderOnly);
    let mut req = create_req("v", SIZE);
    req.volume_capabilities = vec![multi.clone()];
    let vol = d.create_volume(req).unwrap().volume.unwrap().volume_id;
    let attach = |node: &str| ControllerPublishVolumeRequest {
        volume_capability: Some(multi.clone()),
        ..publish_req(&vol, node)
    };
    d.controller_publish_volume(attach("node-2")).unwrap();
    d.node("node-2")
        .unwrap()
        .node_stage_volume(NodeStageVolumeRequest {
            volume_id: vol.clone(),
            staging_target_path: "/staging".into(),
            volume_capability: Some(snw()),
            ..Default::default()
        })
        .unwrap();
    assert_code(
        d.controller_publish_volume(attach("node-1")),
        Code::FailedPrecondition,
        &format!(
            "Volume '{vol}' is already published to node 'node-2' and access mode SINGLE_NODE_WRITER does not allow publishing to another node"
        ),
    );
}
