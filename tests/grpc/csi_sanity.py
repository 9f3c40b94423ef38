#!/usr/bin/env python3
"""A CSI client no one in this project wrote: Python grpcio, with the message types taken from
the server over gRPC server reflection (no .proto file, no generated code). It runs the
csi-sanity cases the lab's driver claims against `cni-csi-lab csi serve --socket PATH` and
prints one line per case; the first failed assertion ends it with exit status 1.

Usage: csi_sanity.py SOCKET NODE
Needs: pip install grpcio grpcio-reflection protobuf
"""

import sys

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

SOCKET, NODE = sys.argv[1], sys.argv[2]
# The channel's default options: grpcio sends the socket's path, percent-encoded, as
# :authority on a unix socket, which the server takes as a grpc-go server does.
CHANNEL = grpc.insecure_channel("unix:" + SOCKET)
POOL = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(CHANNEL))
GIB = 1 << 30
MOUNT = {"mount": {}, "access_mode": {"mode": "SINGLE_NODE_WRITER"}}


def call(service, method, request=None):
    """(code name, response as a dict with proto field names, details) of one unary call."""
    md = POOL.FindServiceByName("csi.v1." + service).FindMethodByName(method)
    req_cls = message_factory.GetMessageClass(md.input_type)
    resp_cls = message_factory.GetMessageClass(md.output_type)
    stub = CHANNEL.unary_unary(
        f"/csi.v1.{service}/{method}",
        request_serializer=req_cls.SerializeToString,
        response_deserializer=resp_cls.FromString,
    )
    req = json_format.ParseDict(request or {}, req_cls())
    try:
        resp = stub(req, timeout=10)
    except grpc.RpcError as e:
        return e.code().name, None, e.details()
    return "OK", json_format.MessageToDict(resp, preserving_proto_field_name=True), ""


def raw(path, payload):
    """(code name, details) of a call with raw bytes, to any method path."""
    stub = CHANNEL.unary_unary(path)
    try:
        stub(payload, timeout=10)
    except grpc.RpcError as e:
        return e.code().name, e.details()
    return "OK", ""


def expect(case, got, code, *checks):
    status, resp, details = got
    assert status == code, f"{case}: expected {code}, got {status} {details!r}"
    for check in checks:
        assert check(resp if code == "OK" else details), f"{case}: {resp or details!r}"
    print(f"ok {case}: {status}" + (f" {details}" if details else ""))
    return resp


def main():
    services = ProtoReflectionDescriptorDatabase(CHANNEL).get_services()
    for s in ("csi.v1.Identity", "csi.v1.Controller", "csi.v1.Node"):
        assert s in services, f"reflection lists {services}, not {s}"
    print("ok reflection: " + ", ".join(sorted(services)))

    # Identity
    expect("GetPluginInfo", call("Identity", "GetPluginInfo"), "OK",
           lambda r: r["name"] == "hostpath.csi.lab", lambda r: r.get("vendor_version"))
    expect("GetPluginCapabilities", call("Identity", "GetPluginCapabilities"), "OK",
           lambda r: {"service": {"type": "CONTROLLER_SERVICE"}} in r["capabilities"])
    expect("Probe", call("Identity", "Probe"), "OK")

    # Controller and Node capabilities, node info
    caps = expect("ControllerGetCapabilities", call("Controller", "ControllerGetCapabilities"), "OK")
    rpcs = {c["rpc"]["type"] for c in caps["capabilities"]}
    assert {"CREATE_DELETE_VOLUME", "PUBLISH_UNPUBLISH_VOLUME"} <= rpcs, rpcs
    ncaps = expect("NodeGetCapabilities", call("Node", "NodeGetCapabilities"), "OK")
    assert {"rpc": {"type": "STAGE_UNSTAGE_VOLUME"}} in ncaps["capabilities"], ncaps
    expect("NodeGetInfo", call("Node", "NodeGetInfo"), "OK", lambda r: r["node_id"] == NODE)

    # CreateVolume: a new volume, the same request again (idempotent, spec "CreateVolume":
    # the same name and a compatible capacity return the volume), another size
    # (ALREADY_EXISTS), and requests missing what the spec requires (INVALID_ARGUMENT).
    create = {"name": "sanity-grpc", "capacity_range": {"required_bytes": str(GIB)},
              "volume_capabilities": [MOUNT]}
    vol = expect("CreateVolume", call("Controller", "CreateVolume", create), "OK",
                 lambda r: int(r["volume"]["capacity_bytes"]) >= GIB)["volume"]
    vid = vol["volume_id"]
    expect("CreateVolume again (idempotent)", call("Controller", "CreateVolume", create), "OK",
           lambda r: r["volume"]["volume_id"] == vid)
    bigger = dict(create, capacity_range={"required_bytes": str(2 * GIB)})
    expect("CreateVolume other size", call("Controller", "CreateVolume", bigger),
           "ALREADY_EXISTS")
    expect("CreateVolume without name",
           call("Controller", "CreateVolume", {"volume_capabilities": [MOUNT]}),
           "INVALID_ARGUMENT", lambda d: "Name missing" in d)
    expect("CreateVolume without capabilities",
           call("Controller", "CreateVolume", {"name": "sanity-nocaps"}), "INVALID_ARGUMENT")

    # The life of a volume on a node: attach, stage, publish, and back.
    pub = expect("ControllerPublishVolume", call("Controller", "ControllerPublishVolume", {
        "volume_id": vid, "node_id": NODE, "volume_capability": MOUNT}), "OK")
    staging = f"/var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.lab/{vid}/globalmount"
    target = "/var/lib/kubelet/pods/sanity/volumes/kubernetes.io~csi/sanity-grpc/mount"
    expect("NodeStageVolume", call("Node", "NodeStageVolume", {
        "volume_id": vid, "staging_target_path": staging, "volume_capability": MOUNT,
        "publish_context": pub.get("publish_context", {})}), "OK")
    expect("NodePublishVolume", call("Node", "NodePublishVolume", {
        "volume_id": vid, "staging_target_path": staging, "target_path": target,
        "volume_capability": MOUNT, "publish_context": pub.get("publish_context", {})}), "OK")
    expect("NodePublishVolume without target",
           call("Node", "NodePublishVolume", {"volume_id": vid, "volume_capability": MOUNT}),
           "INVALID_ARGUMENT")
    expect("NodeUnpublishVolume", call("Node", "NodeUnpublishVolume", {
        "volume_id": vid, "target_path": target}), "OK")
    expect("NodeUnstageVolume", call("Node", "NodeUnstageVolume", {
        "volume_id": vid, "staging_target_path": staging}), "OK")
    expect("ControllerUnpublishVolume", call("Controller", "ControllerUnpublishVolume", {
        "volume_id": vid, "node_id": NODE}), "OK")

    # DeleteVolume, twice (idempotent: a volume that is gone is deleted), and without an ID.
    expect("DeleteVolume", call("Controller", "DeleteVolume", {"volume_id": vid}), "OK")
    expect("DeleteVolume again (idempotent)",
           call("Controller", "DeleteVolume", {"volume_id": vid}), "OK")
    expect("DeleteVolume without ID", call("Controller", "DeleteVolume"), "INVALID_ARGUMENT")

    # What a generic gRPC server answers, whatever the driver.
    code, details = raw("/csi.v1.Controller/NoSuchMethod", b"")
    assert code == "UNIMPLEMENTED" and "unknown method NoSuchMethod" in details, (code, details)
    print(f"ok unknown method: {code} {details}")
    code, details = raw("/csi.v9.Nowhere/Probe", b"")
    assert code == "UNIMPLEMENTED" and "unknown service csi.v9.Nowhere" in details, (code, details)
    print(f"ok unknown service: {code} {details}")
    code, details = raw("/csi.v1.Controller/DeleteVolume", b"\x0a\xff\xff")
    assert code == "INTERNAL" and details.startswith("grpc: error unmarshalling request"), (
        code, details)
    print(f"ok undecodable request: {code} {details}")
    expect("GetPluginInfo after all that", call("Identity", "GetPluginInfo"), "OK")
    print("all cases passed")


if __name__ == "__main__":
    main()
