#!/usr/bin/env python3
"""A gRPC client that puts terminal escape sequences where a CSI request holds names: an OSC
that retitles the window (ESC ] 0 ; title BEL), a CSI that clears the screen (ESC [ 2 J) and
its one-byte C1 form (U+009B). Whatever prints the server's call log must show them escaped.

Usage: hostile_names.py SOCKET
Needs: pip install grpcio grpcio-reflection protobuf
"""

import sys

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

SOCKET = sys.argv[1]
HOSTILE = "v\x1b]0;pwned\x07\x1b[2J\u009b2J"
# Default options, as in csi_sanity.py.
CHANNEL = grpc.insecure_channel("unix:" + SOCKET)
POOL = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(CHANNEL))
MOUNT = {"mount": {}, "access_mode": {"mode": "SINGLE_NODE_WRITER"}}


def call(service, method, request):
    """The code name of one unary call."""
    md = POOL.FindServiceByName("csi.v1." + service).FindMethodByName(method)
    req_cls = message_factory.GetMessageClass(md.input_type)
    resp_cls = message_factory.GetMessageClass(md.output_type)
    stub = CHANNEL.unary_unary(
        f"/csi.v1.{service}/{method}",
        request_serializer=req_cls.SerializeToString,
        response_deserializer=resp_cls.FromString,
    )
    try:
        stub(json_format.ParseDict(request, req_cls()), timeout=10)
    except grpc.RpcError as e:
        return e.code().name
    return "OK"


def main():
    got = [
        call("Controller", "CreateVolume", {"name": HOSTILE, "volume_capabilities": [MOUNT]}),
        call("Controller", "CreateVolume", {"name": HOSTILE}),
        call("Controller", "DeleteVolume", {"volume_id": HOSTILE}),
    ]
    assert got == ["OK", "INVALID_ARGUMENT", "OK"], got
    print("sent", len(got), "calls")


if __name__ == "__main__":
    main()
