//! `Lab::csi_remote_call`, the path a call that arrives over gRPC (`csi serve`) takes: it
//! answers what `csi call` answers, lands in the call log and the wire log as `you`, and is
//! journaled as the `csi call` line a save replays.

use lab_engine::csi::Code;
use serde_json::json;

fn create() -> serde_json::Value {
    json!({
        "name": "remote-1",
        "capacity_range": {"required_bytes": "1073741824"},
        "volume_capabilities": [{"mount": {}, "access_mode": {"mode": "SINGLE_NODE_WRITER"}}]
    })
}

#[test]
fn a_remote_call_is_a_csi_call() {
    let mut remote = crate::common::lab();
    let call = remote.csi_remote_call("/csi.v1.Controller/CreateVolume", None, &create());
    let resp = call.reply.expect("CreateVolume succeeds");
    let id = resp["volume"]["volume_id"]
        .as_str()
        .expect("an ID")
        .to_string();
    assert_eq!(resp["volume"]["capacity_bytes"], json!("1073741824"));
    assert_eq!(call.calls.len(), 1, "{:?}", call.calls);
    let line = call.calls[0].text();
    assert!(
        line.contains("you") && line.contains("CreateVolume"),
        "{line}"
    );

    // The same line typed at the prompt gives the same volume on a fresh lab.
    let mut local = crate::common::lab();
    let out = local
        .execute(&format!("csi call CreateVolume '{}'", create()))
        .expect("csi call succeeds");
    let text: String = out.lines().map(|l| l.text() + "\n").collect();
    assert!(text.contains(&id), "{text}");

    // Journaled: a save of the remote lab replays to the same driver state.
    let last = remote.journal().entries.last().expect("journaled");
    assert!(
        last.line.starts_with("csi call CreateVolume '{"),
        "{}",
        last.line
    );
    // A socket served as a node sends the Controller service to the controller, not to the
    // node plugin (only Node RPCs take the socket's node).
    let again = remote.csi_remote_call("CreateVolume", Some("node-2"), &create());
    assert_eq!(
        again.reply.expect("idempotent")["volume"]["volume_id"],
        json!(id)
    );
    let last = remote.journal().entries.last().expect("journaled");
    assert!(!last.line.contains("--node"), "{}", last.line);
    let info = remote.csi_remote_call("NodeGetInfo", Some("node-2"), &json!({}));
    assert_eq!(info.reply.expect("NodeGetInfo")["node_id"], json!("node-2"));
}

#[test]
fn errors_keep_their_codes_and_messages() {
    let mut lab = crate::common::lab();
    let e = lab
        .csi_remote_call("/csi.v1.Controller/CreateVolume", None, &json!({}))
        .reply
        .expect_err("no name");
    assert_eq!(e.code, Code::InvalidArgument);
    assert_eq!(e.message, "Name missing in request");
    let mut other = create();
    other["capacity_range"]["required_bytes"] = json!("2147483648");
    lab.csi_remote_call("CreateVolume", None, &create())
        .reply
        .expect("created");
    let e = lab
        .csi_remote_call("CreateVolume", None, &other)
        .reply
        .expect_err("another size");
    assert_eq!(e.code, Code::AlreadyExists);
    // An unknown method never reaches the driver, and logs nothing.
    let call = lab.csi_remote_call("/csi.v1.Controller/Nope", None, &json!({}));
    assert_eq!(call.reply.expect_err("unknown").code, Code::Unimplemented);
    assert!(call.calls.is_empty());
    // Node RPCs go to the node given; a node the lab lacks is UNAVAILABLE, as a node plugin
    // that is not there.
    let info = lab
        .csi_remote_call("/csi.v1.Node/NodeGetInfo", Some("node-2"), &json!({}))
        .reply
        .expect("node-2 answers");
    assert_eq!(info["node_id"], json!("node-2"));
    let e = lab
        .csi_remote_call("NodeGetInfo", Some("node-9"), &json!({}))
        .reply
        .expect_err("no node-9");
    assert_eq!(e.code, Code::Unavailable);
    // Strings that need quoting survive the journal line.
    let odd = json!({"name": "it's #1 <<EOF", "volume_capabilities": [{"mount": {}, "access_mode": {"mode": "SINGLE_NODE_WRITER"}}]});
    lab.csi_remote_call("CreateVolume", None, &odd)
        .reply
        .expect("created");
    let line = lab
        .journal()
        .entries
        .last()
        .expect("journaled")
        .line
        .clone();
    let mut replay = crate::common::lab();
    replay.execute(&line).expect("the journal line replays");
}
