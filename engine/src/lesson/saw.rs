//! The `saw …` checks: a view of an object was run during the step, succeeded, and showed a
//! fact. They read what the learner's commands showed as data (`engine::seen::Seen`,
//! recorded in [`Observed`]), never printed text: `echo` shows nothing, a command that
//! failed showed nothing, and a view of another node, pod or flow shows other facts.
//!
//! Places: `NODE` for a node's host namespace, `pod/POD` (`pod/web`, `pod/team/web`) for a
//! pod's. Wire calls: `PLUGIN:COMMAND` (`bridge:ADD`), a CNI command (`DEL`) or a CSI RPC
//! (`CreateVolume`), as `show wire --last` takes them.

use super::check::{Check, Eval, Observed, RecordTest};
use crate::engine::Lab;
use crate::engine::seen::{
    Endpoint, EntryTable, FlowSeen, Place, ReachSeen, RouteFact, Seen, TraceEnd,
};
use crate::record::wire::WireRecord;
use serde_json::Value;

fn arg(a: &[String], i: usize) -> &str {
    a.get(i).map(String::as_str).unwrap_or("")
}

fn yes_no(holds: bool, yes: String, no: String) -> Eval {
    Eval {
        holds,
        actual: if holds { yes } else { no },
    }
}

// ---- places, endpoints ----

/// A place as a check names it: `NODE` or `pod/POD`.
fn place_matches(want: &str, p: &Place) -> bool {
    match want.strip_prefix("pod/") {
        Some(pod) => p
            .pod()
            .is_some_and(|r| pod_named(pod, &r.namespace, &r.name)),
        None => matches!(p, Place::Node(n) if n == want),
    }
}

/// Whether `want` (`name` or `ns/name`) names the pod `ns/name`.
fn pod_named(want: &str, ns: &str, name: &str) -> bool {
    match want.split_once('/') {
        Some((n, x)) => n == ns && x == name,
        None => ns == "default" && want == name,
    }
}

/// Whether `want` (a pod, a node or an address) names the endpoint.
fn endpoint_named(want: &str, e: &Endpoint) -> bool {
    match e {
        Endpoint::Pod(r) => pod_named(want, &r.namespace, &r.name),
        Endpoint::Node(n) => n == want,
        Endpoint::Ip(ip) => want.parse().ok() == Some(*ip),
    }
}

/// A flow as a check writes it: the arguments of `trace`/`reach` (`"web db --port 5432
/// --size 1500"`); the port defaults to 80/TCP as the commands' do, any size matches when
/// none is given.
#[derive(Debug, Clone)]
pub(crate) struct FlowSpec {
    src: String,
    dst: String,
    port: u16,
    protocol: &'static str,
    size: Option<u32>,
}

impl FlowSpec {
    /// Parse `SRC DST [--port P[/PROTO]] [--size BYTES]`.
    pub fn parse(text: &str) -> Result<FlowSpec, String> {
        let line = format!("trace {text}");
        let cmd = crate::command::parse(&line).map_err(|e| match e {
            crate::command::ParseError::Help(h) | crate::command::ParseError::Invalid(h) => h,
        })?;
        let Some(crate::command::Command::Trace(f)) = cmd else {
            return Err(format!("`{text}` is not SRC DST [--port P] [--size BYTES]"));
        };
        let f = f.flow;
        let (port, protocol) = match &f.port {
            Some(p) => crate::cluster::policy::parse_port(p)?,
            None => (80, crate::cluster::policy::Protocol::Tcp),
        };
        Ok(FlowSpec {
            src: f.src,
            dst: f.dst,
            port,
            protocol: protocol.as_str(),
            size: f.size,
        })
    }

    /// `SRC → DST`, for messages.
    fn name(&self) -> String {
        format!(
            "{} → {}:{}/{}",
            self.src, self.dst, self.port, self.protocol
        )
    }
}

/// Whether a flow is the one the spec names.
fn flow_is(f: &FlowSeen, want: &FlowSpec) -> bool {
    endpoint_named(&want.src, &f.src)
        && endpoint_named(&want.dst, &f.dst)
        && want.port == f.port
        && want.protocol == f.protocol
        && want.size.is_none_or(|s| s == f.size)
}

/// The flow a check's first argument names (checked when the lesson is parsed).
fn spec(a: &[String]) -> FlowSpec {
    FlowSpec::parse(arg(a, 0)).unwrap_or(FlowSpec {
        src: String::new(),
        dst: String::new(),
        port: 0,
        protocol: "",
        size: None,
    })
}

// ---- wire ----

/// The wire records the step's commands showed whole: `show wire`'s, and those a raw
/// `cni …`/`csi …` command made (it printed their reply, or the plugin's error or the gRPC
/// status when the call failed: a refused ADD shows its code 999; a usage error ran nothing
/// and made no record).
fn wire_shown(seen: &Observed) -> Vec<u64> {
    let mut out = Vec::new();
    for r in &seen.runs {
        if r.ok() {
            for s in &r.seen {
                if let Seen::Wire(seqs) = s {
                    out.extend(seqs);
                }
            }
        }
        let raw = r
            .shape
            .as_ref()
            .is_some_and(|s| matches!(s.path.first().map(String::as_str), Some("cni" | "csi")));
        if raw {
            out.extend(r.wire.0..r.wire.1);
        }
    }
    out
}

/// Whether a record is the call `want` names (`bridge:ADD`, `DEL`, `CreateVolume`).
fn is_call(rec: &WireRecord, want: &str) -> bool {
    super::focus::WireCall::parse(want).matches(rec)
}

/// The records of `call` the step showed.
fn shown_calls<'l>(lab: &'l Lab, seen: &Observed, call: &str) -> Vec<&'l WireRecord> {
    wire_shown(seen)
        .into_iter()
        .filter_map(|s| lab.wire().get(s))
        .filter(|r| is_call(r, call))
        .collect()
}

/// `saw wire <call>`.
pub fn wire(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let call = arg(a, 0);
    let n = shown_calls(lab, seen, call).len();
    yes_no(
        n > 0,
        format!("you looked at a {call} record on the wire"),
        format!(
            "no {call} record has been shown whole during this step (`show wire --last {call}`)"
        ),
    )
}

/// A CNI environment variable `K=V` (or just `K`), CNI_ARGS' pairs included.
fn env_has(rec: &WireRecord, want: &str) -> bool {
    let WireRecord::Cni(c) = rec else {
        return false;
    };
    let (k, v) = match want.split_once('=') {
        Some((k, v)) => (k, Some(v)),
        None => (want, None),
    };
    let vars = c.env.vars();
    let args = vars
        .iter()
        .find(|(n, _)| *n == "CNI_ARGS")
        .map(|(_, v)| *v)
        .unwrap_or("");
    let pairs = vars
        .iter()
        .map(|(n, v)| (*n, *v))
        .chain(args.split(';').filter_map(|p| p.split_once('=')));
    pairs
        .into_iter()
        .any(|(n, val)| n == k && v.is_none_or(|v| v == val))
}

/// The record test of `saw wire <call> env <K[=V]>`.
pub(crate) fn env_test(_: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    env_has(rec, arg(a, 1))
}

/// `saw wire <call> env <K[=V]>`.
pub(crate) fn wire_env(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, want) = (arg(a, 0), arg(a, 1));
    let recs = shown_calls(lab, seen, call);
    let holds = recs.iter().any(|r| env_test(lab, r, a));
    yes_no(
        holds,
        format!("you saw {want} in a {call} record's environment"),
        if recs.is_empty() {
            format!("no {call} record has been shown whole during this step")
        } else {
            format!("the {call} records shown have no {want} in their environment")
        },
    )
}

/// One part of a record as JSON: `stdin`, `stdout` (CNI), `request`, `response` (CSI).
fn part(rec: &WireRecord, which: &str) -> Option<Value> {
    match (rec, which) {
        (WireRecord::Cni(c), "stdin") => Some(c.stdin.to_json()),
        (WireRecord::Cni(c), "stdout") => serde_json::from_str(&c.stdout()).ok(),
        (WireRecord::Csi(c), "request") => Some(c.request.to_json()),
        (WireRecord::Csi(c), "response") => match &c.reply {
            Ok(r) => Some(r.to_json()),
            Err(s) => serde_json::to_value(s).ok(),
        },
        _ => None,
    }
}

/// A JSON value as a check writes it: JSON (`2`, `true`, `{}`, `"eth0"`), or a bare word
/// taken as a string.
fn json_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// `saw wire <call> <part> <pointer> <value>`: the record's part has `value` at the JSON
/// pointer (`/ips/0/interface`); a value `*` asks only that it is there.
pub(crate) fn wire_json(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, which, ptr, want) = (arg(a, 0), arg(a, 1), arg(a, 2), arg(a, 3));
    let recs = shown_calls(lab, seen, call);
    let holds = recs.iter().any(|r| json_test(lab, r, a));
    yes_no(
        holds,
        format!("you saw {ptr} = {want} in a {call} record's {which}"),
        if recs.is_empty() {
            format!("no {call} record has been shown whole during this step")
        } else {
            format!("the {call} records shown do not have {ptr} = {want} in their {which}")
        },
    )
}

/// The record test of `saw wire <call> <part> <pointer> <value>`.
pub(crate) fn json_test(_: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    holds_at(rec, arg(a, 1), arg(a, 2), arg(a, 3))
}

/// Whether a record's `which` part (`request`, `reply`) has `want` at the JSON pointer
/// `ptr` (`*`: any value there).
fn holds_at(rec: &WireRecord, which: &str, ptr: &str, want: &str) -> bool {
    part(rec, which).is_some_and(|v| {
        v.pointer(ptr)
            .is_some_and(|x| want == "*" || *x == json_value(want))
    })
}

/// The record test of `saw wire <call> caller <actor>`.
pub(crate) fn caller_test(_: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    matches!(rec, WireRecord::Csi(c) if c.caller.is(arg(a, 1)))
}

/// `saw wire <call> caller <actor>`: a CSI call's caller (`external-provisioner`).
pub(crate) fn wire_caller(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, want) = (arg(a, 0), arg(a, 1));
    let holds = shown_calls(lab, seen, call)
        .iter()
        .any(|r| caller_test(lab, r, a));
    yes_no(
        holds,
        format!("you saw that {want} made the {call} call"),
        format!("no {call} record from {want} has been shown whole during this step"),
    )
}

/// `you called <call> <n> times with <pointer> <value>`: CSI calls of this RPC the learner
/// made by hand during this step (each raw `csi` command's own records), answered OK, whose
/// request has this value at the pointer. Records shown with `show wire` do not count.
pub(crate) fn called_by_hand(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    called_by_hand_about(lab, seen, a, None)
}

/// `you called <call> <n> times with <pointer> <value> for pvc <claim>`: as
/// [`called_by_hand`], and each call is about the claim's volume (its volume ID, or its
/// name for CreateVolume): a call on another claim's volume or a volume made by hand does
/// not count.
pub(crate) fn called_by_hand_for_pvc(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let claim = arg(a, 4);
    match crate::engine::query::claim_volume(lab, claim) {
        Some(pv) => called_by_hand_about(lab, seen, a, Some((claim, pv.name, pv.handle))),
        None => yes_no(
            false,
            String::new(),
            format!("no persistent volume was made for claim {claim}"),
        ),
    }
}

/// The CSI calls the learner made by hand during this step (each raw `csi` command's own
/// records), in order, that answered OK.
fn hand_calls<'l>(lab: &'l Lab, seen: &Observed) -> Vec<&'l WireRecord> {
    seen.runs
        .iter()
        .filter(|r| {
            r.shape
                .as_ref()
                .is_some_and(|s| s.path.first().map(String::as_str) == Some("csi"))
        })
        .flat_map(|r| r.wire.0..r.wire.1)
        .filter_map(|s| lab.wire().get(s))
        .filter(|r| matches!(r, WireRecord::Csi(_)) && !r.failed())
        .collect()
}

/// `you repeated <call> with <pointer> <value> for pvc <claim>`: among the learner's CSI
/// calls by hand on the claim's volume with this value at the pointer (`/node_id node-2`),
/// two of this RPC come one right after the other, to the same node with the same request,
/// and both answered OK: what a repeat by a sidecar or kubelet looks like. Alternating
/// calls (publish, unpublish, publish) repeat nothing; a call about another node or target
/// between does not count.
pub(crate) fn repeated_by_hand_for_pvc(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, ptr, want, claim) = (arg(a, 0), arg(a, 1), arg(a, 2), arg(a, 3));
    let Some(pv) = crate::engine::query::claim_volume(lab, claim) else {
        return yes_no(
            false,
            String::new(),
            format!("no persistent volume was made for claim {claim}"),
        );
    };
    let about = |r: &WireRecord| match r {
        WireRecord::Csi(c) => {
            let subject = c.request.subject();
            (subject == Some(pv.name) || subject == Some(pv.handle))
                && holds_at(r, "request", ptr, want)
        }
        WireRecord::Cni(_) => false,
    };
    let same = |x: &WireRecord, y: &WireRecord| match (x, y) {
        (WireRecord::Csi(x), WireRecord::Csi(y)) => {
            x.rpc == y.rpc && x.node == y.node && x.request.to_json() == y.request.to_json()
        }
        _ => false,
    };
    let calls: Vec<&WireRecord> = hand_calls(lab, seen)
        .into_iter()
        .filter(|r| about(r))
        .collect();
    let mine = calls.iter().filter(|r| is_call(r, call)).count();
    let holds = calls
        .windows(2)
        .any(|w| is_call(w[0], call) && same(w[0], w[1]));
    let of = format!(
        "{call} on claim {claim}'s volume {} with {ptr} = {want}",
        pv.handle
    );
    yes_no(
        holds,
        format!("you made the same {of} twice in a row, and both answered OK"),
        if mine == 0 {
            format!("you made no {of} that answered OK during this step (`csi …` makes the call)")
        } else {
            format!(
                "you made {mine} {of}, but never the same call twice in a row: a repeat is the same call again, before any other"
            )
        },
    )
}

/// The count behind both `you called …` lines; `volume` is the claim, its PV's name and
/// its volume ID.
fn called_by_hand_about(
    lab: &Lab,
    seen: &Observed,
    a: &[String],
    volume: Option<(&str, &str, &str)>,
) -> Eval {
    let (call, ptr, want) = (arg(a, 0), arg(a, 2), arg(a, 3));
    let need = arg(a, 1).parse::<usize>().unwrap_or(usize::MAX);
    let by_hand = hand_calls(lab, seen)
        .into_iter()
        .filter(|r| is_call(r, call));
    let about = |r: &WireRecord| match (volume, r) {
        (None, _) => true,
        (Some((_, name, handle)), WireRecord::Csi(c)) => {
            let subject = c.request.subject();
            subject == Some(name) || subject == Some(handle)
        }
        (Some(_), WireRecord::Cni(_)) => false,
    };
    let have = by_hand
        .filter(|r| about(r) && holds_at(r, "request", ptr, want))
        .count();
    let of = volume.map_or(String::new(), |(claim, _, handle)| {
        format!(" on claim {claim}'s volume {handle}")
    });
    yes_no(
        have >= need,
        format!("you made {have} {call} call(s){of} with {ptr} = {want} that answered OK"),
        format!(
            "{have} {call} call(s) of yours{of} with {ptr} = {want} answered OK during this step, not {need} (`csi …` makes the call; `show wire` only shows one)"
        ),
    )
}

/// The record test of `saw wire <call> from pvc|snapshot <source>`: the request's
/// `volume_content_source` names the source claim's volume ID (a clone) or the snapshot's
/// snapshot ID (a restore).
pub(crate) fn from_source_test(lab: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    let (kind, source) = (arg(a, 1), arg(a, 2));
    let (ptr, want) = match kind {
        "pvc" => (
            "/volume_content_source/volume/volume_id",
            crate::engine::query::claim_volume(lab, source).map(|pv| pv.handle),
        ),
        _ => (
            "/volume_content_source/snapshot/snapshot_id",
            crate::engine::query::snapshot_handle(lab, source),
        ),
    };
    let Some(want) = want.filter(|w| !w.is_empty()) else {
        return false;
    };
    part(rec, "request").is_some_and(|v| v.pointer(ptr).and_then(Value::as_str) == Some(want))
}

/// `saw wire <call> from pvc|snapshot <source>`: a record shown this step has the source
/// claim's volume (or the snapshot) as its content source.
pub(crate) fn wire_from_source(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, kind, source) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let recs = shown_calls(lab, seen, call);
    let what = if kind == "pvc" {
        format!("claim {source}'s volume")
    } else {
        format!("snapshot {source}")
    };
    yes_no(
        recs.iter().any(|r| from_source_test(lab, r, a)),
        format!("you saw a {call} call whose content source is {what}"),
        if recs.is_empty() {
            format!("no {call} record has been shown whole during this step")
        } else {
            format!("the {call} records shown do not copy {what} (their volume_content_source)")
        },
    )
}

/// The record test of `saw wire <call> for pvc <claim>`: a component's call (not one made
/// by hand) about the claim's volume — CreateVolume names it, the others take its volume
/// ID — that answered OK.
pub(crate) fn for_pvc_test(lab: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    let WireRecord::Csi(c) = rec else {
        return false;
    };
    let Some(pv) = crate::engine::query::claim_volume(lab, arg(a, 1)) else {
        return false;
    };
    let subject = c.request.subject();
    c.reply.is_ok()
        && !c.caller.is(crate::engine::csi_cmd::YOU)
        && (subject == Some(pv.name) || subject == Some(pv.handle))
}

/// `saw wire <call> for pvc <claim>`: a record shown this step is the call a component
/// made for the claim's volume, and it answered.
pub(crate) fn wire_for_pvc(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, claim) = (arg(a, 0), arg(a, 1));
    let Some(pv) = crate::engine::query::claim_volume(lab, claim) else {
        return yes_no(
            false,
            String::new(),
            format!("no persistent volume was made for claim {claim}"),
        );
    };
    let recs = shown_calls(lab, seen, call);
    yes_no(
        recs.iter().any(|r| for_pvc_test(lab, r, a)),
        format!(
            "you saw the {call} call for claim {claim}'s volume {}",
            pv.name
        ),
        if recs.is_empty() {
            format!("no {call} record has been shown whole during this step")
        } else {
            format!(
                "the {call} records shown are not the call a component made for claim {claim}'s volume {} (`show wire --last {call}` right after the claim is provisioned)",
                pv.name
            )
        },
    )
}

/// Whether a CNI call's `CNI_ARGS` name the pod that exists now: its namespace and name,
/// and its UID (`K8S_POD_UID`), read as plugins read them. A call for an earlier pod of the
/// same name (deleted, then made again) names another UID.
fn args_name_pod(lab: &Lab, args: &str, pod: &str) -> bool {
    let Some(now) = crate::engine::query::pod(lab, pod) else {
        return false;
    };
    let (mut ns, mut name, mut uid) = ("", "", "");
    for (_, kv) in crate::cni::plugins::common::arg_items(args) {
        match kv {
            Some(("K8S_POD_NAMESPACE", v)) => ns = v,
            Some(("K8S_POD_NAME", v)) => name = v,
            Some(("K8S_POD_UID", v)) => uid = v,
            _ => {}
        }
    }
    !name.is_empty() && pod_named(pod, ns, name) && !uid.is_empty() && uid == &*now.uid.text()
}

/// The record test of `saw wire <call> for pod <pod>`: a CNI call for the pod that exists
/// now (its CNI_ARGS name it and its UID).
pub(crate) fn for_pod_test(lab: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    matches!(rec, WireRecord::Cni(c) if args_name_pod(lab, &c.env.args, arg(a, 1)))
}

/// `saw wire <call> for pod <pod>`: a record shown this step is a call for the pod that
/// exists now; the record of a pod of the same name deleted since does not count.
pub(crate) fn wire_for_pod(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, pod) = (arg(a, 0), arg(a, 1));
    if crate::engine::query::pod(lab, pod).is_none() {
        return yes_no(false, String::new(), format!("there is no pod {pod}"));
    }
    let recs = shown_calls(lab, seen, call);
    yes_no(
        recs.iter().any(|r| for_pod_test(lab, r, a)),
        format!("you saw a {call} call for pod {pod}"),
        if recs.is_empty() {
            format!("no {call} record has been shown whole during this step")
        } else {
            format!(
                "the {call} records shown are not calls for pod {pod} as it is now (a pod of that name deleted since is another pod: its UID differs)"
            )
        },
    )
}

/// The `saw wire CALL …` lines of a step that test one record's content must all hold on
/// one record: a size seen in one CreateVolume and a topology in another, or a field of a
/// call made by hand beside the claim's own call, are not what one call carried. `Err`
/// names a line of a call whose facts no one record shown has.
pub(crate) fn one_record_each<'c>(
    checks: &'c [Check],
    lab: &Lab,
    seen: &Observed,
) -> Result<(), (&'c Check, Eval)> {
    let tests: Vec<(&Check, RecordTest)> = checks
        .iter()
        .filter(|c| !c.negated)
        .filter_map(|c| Some((c, super::check::record_test(c)?)))
        .collect();
    let mut calls: Vec<&str> = tests.iter().map(|(c, _)| arg(&c.args, 0)).collect();
    calls.sort_unstable();
    calls.dedup();
    for call in calls {
        let group: Vec<&(&Check, RecordTest)> = tests
            .iter()
            .filter(|(c, _)| arg(&c.args, 0) == call)
            .collect();
        let [(first, _), _, ..] = group.as_slice() else {
            continue;
        };
        let one = shown_calls(lab, seen, call)
            .into_iter()
            .any(|r| group.iter().all(|(c, test)| test(lab, r, &c.args)));
        if !one {
            return Err((
                *first,
                Eval {
                    holds: false,
                    actual: format!(
                        "the {call} records shown have these facts only between them: one {call} record must show them all"
                    ),
                },
            ));
        }
    }
    Ok(())
}

// ---- routes ----

/// A route as a check writes it: `DST [via IP] [dev DEV] [proto P] [onlink]`, or
/// `blackhole DST`; every part given must match.
fn route_matches(spec: &str, r: &RouteFact) -> bool {
    let words: Vec<&str> = spec.split_whitespace().collect();
    let (blackhole, rest) = match words.split_first() {
        Some((&"blackhole", rest)) => (true, rest),
        _ => (false, &words[..]),
    };
    let Some((dst, mut rest)) = rest.split_first() else {
        return false;
    };
    if *dst != r.dst || blackhole != r.blackhole {
        return false;
    }
    while let Some((k, tail)) = rest.split_first() {
        let (ok, tail) = match (*k, tail.split_first()) {
            ("onlink", _) => (r.onlink, tail),
            ("via", Some((v, t))) => (r.via.is_some_and(|ip| v.parse().ok() == Some(ip)), t),
            ("dev", Some((v, t))) => (r.dev == *v, t),
            ("proto", Some((v, t))) => (r.proto.as_deref() == Some(*v), t),
            // Other words (`scope link`, `src …`) must appear in the printed line.
            (w, _) => (r.line.split_whitespace().any(|x| x == w), tail),
        };
        if !ok {
            return false;
        }
        rest = tail;
    }
    true
}

/// `saw route <place> <route>`.
pub fn route(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (place, spec) = (arg(a, 0), arg(a, 1));
    let mut shown = false;
    let holds = seen.seen().any(|s| match s {
        Seen::Routes(tables) => tables.iter().any(|t| {
            let here = place_matches(place, &t.place);
            shown |= here;
            here && t.routes.iter().any(|r| route_matches(spec, r))
        }),
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw {place}'s route {spec}"),
        if shown {
            format!("{place}'s route table was shown, without a route {spec}")
        } else {
            format!("{place}'s route table has not been shown during this step (`show routes`)")
        },
    )
}

// ---- links ----

/// `saw link <place> <ifname> <spec>`: `mtu N`, `master BR`, `kind K`, `addr CIDR`, `up`,
/// or words of the link's `ip -d` lines (`vxlan id 1`, `dstport 8472`).
pub fn link(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (place, name, spec) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let words: Vec<&str> = spec.split_whitespace().collect();
    let mut shown = false;
    let holds = seen.seen().any(|s| match s {
        Seen::Links(sets) => sets.iter().any(|set| {
            place_matches(place, &set.place)
                && set.links.iter().any(|l| {
                    if l.name != name {
                        return false;
                    }
                    shown = true;
                    match words.as_slice() {
                        ["mtu", n] => n.parse() == Ok(l.mtu),
                        ["master", m] => l.master.as_deref() == Some(*m),
                        ["kind", k] => l.kind == *k,
                        ["addr", x] => l.addrs.iter().any(|y| y == x),
                        ["up"] => l.up,
                        _ => l.lines.iter().any(|line| {
                            let lw: Vec<&str> = line.split_whitespace().collect();
                            lw.windows(words.len().max(1))
                                .any(|w| w == words.as_slice())
                        }),
                    }
                })
        }),
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw {place}'s {name}: {spec}"),
        if shown {
            format!("{place}'s {name} was shown, not with {spec}")
        } else {
            format!("{place}'s {name} has not been shown during this step (`show links`)")
        },
    )
}

// ---- iptables, entries ----

/// Whether `rule` (as `iptables -S` prints it) holds `words` in a row.
fn has_words(rule: &str, words: &[&str]) -> bool {
    let rw: Vec<&str> = rule.split_whitespace().collect();
    !words.is_empty() && rw.windows(words.len()).any(|w| w == words)
}

/// `saw iptables <node> <table> <rule words>`: a rule of that table shown, holding the words
/// in a row (`-A FLANNEL-POSTRTG -s 10.244.1.0/24`, `--to-destination 10.244.1.2:80`).
pub fn iptables(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (node, table, spec) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let words: Vec<&str> = spec.split_whitespace().collect();
    let mut shown = false;
    let holds = seen.seen().any(|s| match s {
        Seen::Iptables(t) if t.node == node && t.table == table => {
            shown = true;
            t.rules.iter().any(|r| has_words(r, &words))
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw the rule `{spec}` in {node}'s {table} table"),
        if shown {
            format!("{node}'s {table} table was shown, without a rule `{spec}`")
        } else {
            format!(
                "{node}'s {table} table has not been shown during this step (`show iptables {node} --table {table}`)"
            )
        },
    )
}

/// `saw neigh|fdb <node> <entry words>`.
pub fn entries(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (which, node, spec) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let table = if which == "fdb" {
        EntryTable::Fdb
    } else {
        EntryTable::Neigh
    };
    let words: Vec<&str> = spec.split_whitespace().collect();
    let holds = seen.seen().any(|s| match s {
        Seen::Entries {
            table: t,
            node: n,
            entries,
        } => *t == table && n == node && entries.iter().any(|e| has_words(e, &words)),
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw {node}'s {which} entry `{spec}`"),
        format!(
            "no {which} entry `{spec}` of {node} has been shown during this step (`show {which} {node}`)"
        ),
    )
}

// ---- ipam, net.d ----

/// `saw ipam <node> lease|last-reserved <ip>` and `saw ipam <node> net <name>`.
pub fn ipam(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (node, what, value) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let ip: Option<std::net::IpAddr> = value.parse().ok();
    let holds = seen.seen().any(|s| match s {
        Seen::Ipam(stores) => stores.iter().any(|st| {
            st.node == node
                && match what {
                    "lease" => st.leases.iter().any(|(l, _, _)| Some(*l) == ip),
                    "last-reserved" => st.last_reserved.iter().any(|(_, l)| Some(*l) == ip),
                    _ => st.net == value,
                }
        }),
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw {node}'s host-local {what} {value}"),
        format!(
            "{node}'s host-local store with {what} {value} has not been shown during this step (`show ipam {node}`)"
        ),
    )
}

/// `saw conf <node> active <file>`: `cni conf show` marked that file as the one in use.
pub(crate) fn conf_active(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (node, file) = (arg(a, 0), arg(a, 1));
    let holds = seen.seen().any(|s| match s {
        Seen::Conf(dirs) => dirs
            .iter()
            .any(|d| d.node == node && d.active.as_deref() == Some(file)),
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw that {node}'s runtime uses {file}"),
        format!("`cni conf show --node {node}` has not shown {file} in use during this step"),
    )
}

// ---- trace, reach ----

/// `saw trace <flow> delivered|dropped|no-route|conflict|left`.
pub(crate) fn trace_end(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (flow, end) = (spec(a), arg(a, 1));
    let want = match end {
        "delivered" => TraceEnd::Delivered,
        "dropped" => TraceEnd::Dropped,
        "left" => TraceEnd::LeftCluster,
        "conflict" => TraceEnd::Conflict,
        _ => TraceEnd::NoRoute,
    };
    let mut ended = Vec::new();
    let holds = traces(seen, &flow).any(|t| {
        ended.push(t.result.clone());
        t.end == want
    });
    yes_no(
        holds,
        format!("you traced {}: {end}", flow.name()),
        match ended.last() {
            Some(r) => format!("your trace of {} ended: {r}", flow.name()),
            None => format!("`trace {}` has not been run during this step", arg(a, 0)),
        },
    )
}

/// The traces of the flow the step showed.
fn traces<'o>(
    seen: &'o Observed,
    flow: &'o FlowSpec,
) -> impl Iterator<Item = &'o crate::engine::seen::TraceSeen> {
    seen.seen().filter_map(move |s| match s {
        Seen::Trace(t) if flow_is(&t.flow, flow) => Some(&**t),
        _ => None,
    })
}

/// `saw trace <flow> mtu <n>`: the packet did not fit an MTU of n on the way.
pub(crate) fn trace_mtu(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (flow, mtu) = (spec(a), arg(a, 1));
    let holds =
        traces(seen, &flow).any(|t| t.too_big.as_ref().is_some_and(|b| mtu.parse() == Ok(b.mtu)));
    yes_no(
        holds,
        format!("you saw {} not fit an MTU of {mtu}", flow.name()),
        format!(
            "no trace of {} during this step stopped at an MTU of {mtu}",
            flow.name()
        ),
    )
}

/// `saw trace <flow> route <node> <route>`: the packet took that route on that node.
pub(crate) fn trace_route(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (flow, node, rspec) = (spec(a), arg(a, 1), arg(a, 2));
    let holds = traces(seen, &flow).any(|t| {
        t.routes
            .iter()
            .any(|(n, r)| n == node && route_matches(rspec, r))
    });
    yes_no(
        holds,
        format!("you saw {} take {node}'s route {rspec}", flow.name()),
        format!(
            "no trace of {} during this step took {node}'s route {rspec}",
            flow.name()
        ),
    )
}

/// `saw trace <flow> source rewritten`: netfilter rewrote the source (MASQUERADE, SNAT) on
/// the way.
pub(crate) fn trace_rewritten(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let flow = spec(a);
    let holds = traces(seen, &flow).any(|t| {
        t.rewrites
            .iter()
            .any(|r| matches!(r, crate::net::trace::Rewrite::Source(..)))
    });
    yes_no(
        holds,
        format!("you saw the source of {} rewritten on the way", flow.name()),
        format!(
            "no trace of {} during this step had its source rewritten",
            flow.name()
        ),
    )
}

/// `saw trace <flow> hop <kind>`: a hop of that kind (`tunnel`, `netfilter`, `policy`,
/// `underlay`, `bridge`, `veth`, `pod-route`, `node-route`).
pub(crate) fn trace_hop(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::net::trace::HopKind;
    let (flow, kind) = (spec(a), arg(a, 1));
    let want = match kind {
        "tunnel" => Some(HopKind::Tunnel),
        "netfilter" => Some(HopKind::Netfilter),
        "policy" => Some(HopKind::Policy),
        "underlay" => Some(HopKind::Underlay),
        "bridge" => Some(HopKind::Bridge),
        "veth" => Some(HopKind::Veth),
        "pod-route" => Some(HopKind::PodRoute),
        "node-route" => Some(HopKind::NodeRoute),
        _ => None,
    };
    let holds = traces(seen, &flow).any(|t| t.hops.iter().any(|h| Some(h.kind) == want));
    yes_no(
        holds,
        format!("you saw a {kind} hop on {}", flow.name()),
        format!(
            "no trace of {} during this step went through a {kind} hop",
            flow.name()
        ),
    )
}

/// `saw reach <flow> allowed|denied`: what the data plane does with the flow.
pub fn reach(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    reach_verdict(lab, seen, a, false)
}

/// `saw reach <flow> policies allowed|denied`: the policies' own verdict.
pub(crate) fn reach_policies(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    reach_verdict(lab, seen, a, true)
}

/// What `reach` would record for the flow now: the data plane's verdict, the policies'
/// and each side's decision (as [`ReachSeen`] holds them).
fn reach_now(lab: &Lab, flow: &FlowSpec) -> Option<(bool, bool, crate::net::policy::Verdict)> {
    let args = crate::command::grammar::FlowArgs {
        src: flow.src.clone(),
        dst: flow.dst.clone(),
        port: Some(format!("{}/{}", flow.port, flow.protocol)),
        size: flow.size,
    };
    let t = lab.walk(&args).ok()?;
    let enforced = t.enforcement != crate::net::trace::Enforcement::None;
    Some((
        !enforced || t.policy_allows(),
        t.verdict.allowed(),
        t.verdict,
    ))
}

/// A verdict seen during the step counts while it is the past (a denial before the fix),
/// or, when the flow gets that verdict now too, only if it was judged as it is judged now:
/// by the same policies, side by side. An `allowed` seen before a default deny was put
/// back is not the allow the step's policy gives.
fn reach_verdict(lab: &Lab, seen: &Observed, a: &[String], policies: bool) -> Eval {
    let (flow, word) = (spec(a), arg(a, 1));
    let verdict_of = |r: &ReachSeen| {
        if policies {
            r.policies_allow
        } else {
            r.allowed
        }
    };
    let now = reach_now(lab, &flow);
    let mut said = None;
    let mut stale = false;
    let holds = seen.seen().any(|s| match s {
        Seen::Reach(r) if flow_is(&r.flow, &flow) => {
            let v = verdict_of(r);
            said = Some(v);
            if v != (word == "allowed") {
                return false;
            }
            let current = now
                .as_ref()
                .is_none_or(|(allowed, policies_allow, verdict)| {
                    let now_v = if policies { *policies_allow } else { *allowed };
                    now_v != v || *verdict == r.verdict
                });
            stale |= !current;
            current
        }
        _ => false,
    });
    let what = if policies {
        "the policies' verdict"
    } else {
        "reach"
    };
    yes_no(
        holds,
        format!("you saw {what} on {}: {word}", flow.name()),
        match said {
            _ if stale => format!(
                "the {word} you saw on {} was judged by other policies than the flow has now: `reach {}` again",
                flow.name(),
                arg(a, 0)
            ),
            Some(v) => format!(
                "{what} on {} said {}",
                flow.name(),
                if v { "allowed" } else { "denied" }
            ),
            None => format!("`reach {}` has not been run during this step", arg(a, 0)),
        },
    )
}

/// `caused <actor>`: a command of this step made a call-log entry by that actor
/// (`external-attacher`, `containerd(node-1)`).
pub(crate) fn caused(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let want = arg(a, 0);
    let holds = seen.succeeded().any(|r| {
        (r.calls.0..r.calls.1)
            .filter_map(|s| lab.calls().get(s))
            .any(|e| e.actor().is(want))
    });
    yes_no(
        holds,
        format!("a command of this step made {want} act"),
        format!("no command of this step made {want} act"),
    )
}

/// Whether a command of this step that succeeded ran `plugin`'s `command`, the plugin
/// answered OK, and the call is `about` what the check names (its node, its pod).
fn ran_plugin(
    lab: &Lab,
    seen: &Observed,
    plugin: &str,
    command: &str,
    about: impl Fn(&crate::cni::runtime::WireCall) -> bool,
) -> bool {
    seen.succeeded().any(|r| {
        (r.wire.0..r.wire.1)
            .filter_map(|s| lab.wire().get(s))
            .any(|rec| match rec {
                WireRecord::Cni(c) => {
                    c.plugin_type == plugin
                        && c.env.command.is_some_and(|c| c.as_str() == command)
                        && c.reply.is_ok()
                        && about(c)
                }
                WireRecord::Csi(_) => false,
            })
    })
}

/// `caused PLUGIN COMMAND on NODE`: a command of this step ran the plugin's COMMAND on the
/// node (`bridge GC`: libcni's GC, which only `cni gc` or a runtime's GC sends), and the
/// plugin succeeded.
pub(crate) fn caused_plugin_on(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (plugin, command, node) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let holds = ran_plugin(lab, seen, plugin, command, |c| &*c.node == node);
    yes_no(
        holds,
        format!("a command of this step ran {plugin} {command} on {node}, and it succeeded"),
        format!("no command of this step ran {plugin} {command} on {node} successfully"),
    )
}

/// `caused PLUGIN COMMAND for pod POD`: a command of this step ran the plugin's COMMAND
/// for the pod, as the call's `CNI_ARGS` name it (`K8S_POD_NAMESPACE`, `K8S_POD_NAME`, read
/// as plugins read them), and the plugin succeeded: a DEL that ran another network's chain
/// never reaches this plugin.
pub(crate) fn caused_plugin_for_pod(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (plugin, command, pod) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let for_pod = |args: &str| {
        let (mut ns, mut name) = ("", "");
        for (_, kv) in crate::cni::plugins::common::arg_items(args) {
            match kv {
                Some(("K8S_POD_NAMESPACE", v)) => ns = v,
                Some(("K8S_POD_NAME", v)) => name = v,
                _ => {}
            }
        }
        !name.is_empty() && pod_named(pod, ns, name)
    };
    let holds = ran_plugin(lab, seen, plugin, command, |c| for_pod(&c.env.args));
    yes_no(
        holds,
        format!("a command of this step ran {plugin} {command} for pod {pod}"),
        format!("no command of this step ran {plugin} {command} for pod {pod}"),
    )
}

// ---- describe, get ----

/// Whether `object` is the one a check names: its kind by any of kubectl's words (`pod`,
/// `pvc`, `va`), and `name` or `ns/name`.
fn object_named(kind: &str, name: &str, object: &crate::cluster::ObjectRef) -> bool {
    crate::resource::lookup(kind) == Some(object.kind)
        && match name.split_once('/') {
            Some((ns, n)) => ns == object.namespace && n == object.name,
            None => {
                name == object.name
                    && (object.namespace.is_empty() || object.namespace == "default")
            }
        }
}

/// The objects `describe` showed during the step.
fn described(seen: &Observed) -> impl Iterator<Item = &crate::engine::seen::Described> {
    seen.seen().flat_map(|s| match s {
        Seen::Described(d) => d.as_slice(),
        _ => &[],
    })
}

/// `saw describe <kind> <name>`: the object was described.
pub fn describe(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (kind, name) = (arg(a, 0), arg(a, 1));
    let holds = described(seen).any(|d| object_named(kind, name, &d.object));
    yes_no(
        holds,
        format!("you described {kind} {name}"),
        format!("`describe {kind} {name}` has not been run during this step"),
    )
}

/// `saw describe <kind> <name> event <Reason>` and `… event <Reason> <message words>`:
/// the description's Events section showed that event (its message holding the words).
pub(crate) fn describe_event(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (kind, name, reason) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let words = a.get(3).map(String::as_str);
    let mut shown = Vec::new();
    let holds = described(seen)
        .filter(|d| object_named(kind, name, &d.object))
        .flat_map(|d| &d.events)
        .any(|e| {
            shown.push(e.reason);
            e.reason == reason && words.is_none_or(|w| e.message.contains(w))
        });
    let what = match words {
        Some(w) => format!("{reason} ({w:?})"),
        None => reason.to_string(),
    };
    yes_no(
        holds,
        format!("you saw {kind} {name}'s event {what}"),
        if shown.is_empty() {
            format!(
                "no description of {kind} {name} with its events has been shown during this step (`describe {kind} {name}`)"
            )
        } else {
            format!(
                "the description of {kind} {name} showed events {}, not {what}",
                shown.join(", ")
            )
        },
    )
}

/// `saw get <kind>` / `saw get <kind> <name>` / `saw get <kind> <name> <format>`: `get`
/// listed objects of the kind (that one; in that format: table, wide, json, yaml, name).
pub fn get(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let kind = arg(a, 0);
    let name = a.get(1).map(String::as_str);
    let format = a.get(2).map(String::as_str);
    let holds = seen.seen().any(|s| match s {
        Seen::Got { objects, format: f } => {
            format.is_none_or(|w| w == *f)
                && match name {
                    Some(n) => objects.iter().any(|o| object_named(kind, n, o)),
                    None => crate::resource::lookup(kind)
                        .is_some_and(|k| objects.iter().any(|o| o.kind == k)),
                }
        }
        _ => false,
    });
    let what = [Some(kind), name, format]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    yes_no(
        holds,
        format!("you listed {what}"),
        format!("`get {what}` has not shown it during this step"),
    )
}

// ---- lessons ch2-core-ideas and ch7-hands-on: errors, method paths, watch, volumes,
// ---- what a policy admits

/// A failure's reason as a check writes it: `cni:999`, `csi:ALREADY_EXISTS`,
/// `api:Conflict`, `usage`, `refused` or `other`.
fn reason_word(r: crate::engine::Reason) -> String {
    use crate::engine::Reason;
    match r {
        Reason::Usage => "usage".into(),
        Reason::Api(a) => format!("api:{a}"),
        Reason::Cni(c) => format!("cni:{c}"),
        Reason::Csi(c) => format!("csi:{}", c.name()),
        Reason::Refused => "refused".into(),
        Reason::Other => "other".into(),
    }
}

/// `saw error <command> <reason>` and `… <reason> <message words>`: during this step the
/// command (a complete one, compared by its typed shape as `command ran` does) failed for
/// this reason, its error message holding the words. What a step whose point is an error
/// checks: `echo` fails nothing, another command's error (a usage error, the wrong node)
/// is another command or another reason.
pub fn error(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (line, want) = (arg(a, 0), arg(a, 1));
    let words = a.get(2).map(String::as_str);
    let Some(shape) = super::check::shape_of(line) else {
        return yes_no(false, String::new(), format!("`{line}` is not a command"));
    };
    let mut got = Vec::new();
    let holds = seen
        .runs
        .iter()
        .filter(|r| r.shape.as_ref().is_some_and(|s| s.matches(&shape)))
        .any(|r| match (r.failed, &r.error) {
            (Some(reason), Some(message)) => {
                got.push(format!("{} ({message})", reason_word(reason)));
                reason_word(reason).eq_ignore_ascii_case(want)
                    && words.is_none_or(|w| message.contains(w))
            }
            _ => {
                got.push("it succeeded".into());
                false
            }
        });
    let what = match words {
        Some(w) => format!("{want} ({w:?})"),
        None => want.to_string(),
    };
    yes_no(
        holds,
        format!("you saw `{line}` fail: {what}"),
        match got.last() {
            Some(g) => format!("`{line}` ran during this step, not failing with {what}: {g}"),
            None => format!("`{line}` has not been run during this step"),
        },
    )
}

/// `saw wire <call> method <path>`: `show wire` showed a record of the CSI call whole, with
/// this gRPC method path (`/csi.v1.Identity/Probe`); a raw `csi` command prints only the
/// reply, so it does not count here.
/// The record test of `saw wire <call> method <path>`.
pub(crate) fn method_test(_: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    matches!(rec, WireRecord::Csi(c) if c.path() == arg(a, 1))
}

pub(crate) fn wire_method(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, want) = (arg(a, 0), arg(a, 1));
    let mut shown = false;
    let holds = seen
        .seen()
        .filter_map(|s| match s {
            Seen::Wire(seqs) => Some(seqs),
            _ => None,
        })
        .flatten()
        .filter_map(|s| lab.wire().get(*s))
        .filter(|r| is_call(r, call))
        .any(|r| {
            shown = true;
            method_test(lab, r, a)
        });
    yes_no(
        holds,
        format!("you saw the {call} record's method {want}"),
        if shown {
            format!("the {call} records shown have another method than {want}")
        } else {
            format!("`show wire` has not shown a {call} record during this step")
        },
    )
}

/// `saw watch <TYPE> <Kind> <object>`: `show watch` listed an event of this type (ADDED,
/// MODIFIED, DELETED) for this object (`default/web`, or a name for a cluster-scoped one).
pub fn watch(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (ty, kind, key) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let mut listed = false;
    let holds = seen.seen().any(|s| match s {
        Seen::Watch(events) => {
            listed = true;
            events.iter().any(|e| {
                format!("{:?}", e.event_type).eq_ignore_ascii_case(ty)
                    && e.kind.name().eq_ignore_ascii_case(kind)
                    && e.key == key
            })
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw the watch event {ty} {kind} {key}"),
        if listed {
            format!("the watch events shown have no {ty} {kind} {key}")
        } else {
            "`show watch` has not been run during this step".into()
        },
    )
}

/// The rows `show volumes` printed during the step for the claim (`name` or `ns/name`).
fn volume_rows<'o>(
    seen: &'o Observed,
    pvc: &'o str,
) -> impl Iterator<Item = &'o crate::engine::volume_view::VolumeRow> {
    let key = if pvc.contains('/') {
        pvc.to_string()
    } else {
        format!("default/{pvc}")
    };
    seen.seen()
        .flat_map(|s| match s {
            Seen::Volumes(rows) => rows.as_slice(),
            _ => &[],
        })
        .filter(move |r| r.pvc == key)
}

/// `saw volume <pvc> on <node> state <STATE>`: `show volumes` showed the claim's volume in
/// this CSI lifecycle state on the node (CREATED, NODE_READY, VOL_READY, PUBLISHED), with
/// its staging path and targets.
pub(crate) fn volume_state(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (pvc, node, want) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let mut states = Vec::new();
    let holds = volume_rows(seen, pvc)
        .flat_map(|r| &r.nodes)
        .filter(|n| n.node == node)
        .any(|n| {
            states.push(n.state.clone());
            n.state == want
        });
    yes_no(
        holds,
        format!("you saw claim {pvc}'s volume {want} on {node}"),
        match states.last() {
            Some(s) => format!("`show volumes` showed claim {pvc}'s volume {s} on {node}"),
            None => format!(
                "`show volumes` has not shown claim {pvc}'s volume on {node} during this step"
            ),
        },
    )
}

/// `saw volume <pvc> on <node> targets <n>`: `show volumes` showed this many publish
/// targets (one per pod) for the claim's volume on the node.
pub(crate) fn volume_targets(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (pvc, node, want) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let mut counts = Vec::new();
    let holds = volume_rows(seen, pvc)
        .flat_map(|r| &r.nodes)
        .filter(|n| n.node == node)
        .any(|n| {
            counts.push(n.targets.len());
            want.parse() == Ok(n.targets.len())
        });
    yes_no(
        holds,
        format!("you saw {want} target(s) of claim {pvc}'s volume on {node}"),
        match counts.last() {
            Some(c) => format!("`show volumes` showed {c} target(s) of claim {pvc} on {node}"),
            None => format!(
                "`show volumes` has not shown claim {pvc}'s volume on {node} during this step"
            ),
        },
    )
}

/// `policy <policy> only-from|only-to <KEY=VALUE> port <port>`: every ingress (or egress)
/// rule of the NetworkPolicy lets through only pods of its namespace with that label, on
/// that port alone (see [`crate::engine::query::policy_only`]).
pub(crate) fn policy_only(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (key, dir, label, port) = (arg(a, 0), arg(a, 1), arg(a, 2), arg(a, 3));
    let (ns, name) = key.split_once('/').unwrap_or(("default", key));
    let egress = dir == "only-to";
    let Some((k, v)) = label.split_once('=') else {
        return yes_no(false, String::new(), format!("{label} is not KEY=VALUE"));
    };
    let Ok((port, proto)) = crate::cluster::policy::parse_port(port) else {
        return yes_no(false, String::new(), format!("{port} is not a port"));
    };
    let Some(holds) = crate::engine::query::policy_only(lab, key, (k, v), (port, proto), egress)
    else {
        return yes_no(
            false,
            String::new(),
            format!("networkpolicy {ns}/{name} does not exist"),
        );
    };
    let (rules, to) = if egress {
        ("egress", "out to")
    } else {
        ("ingress", "in from")
    };
    let port = format!("{port}/{}", proto.as_str());
    yes_no(
        holds,
        format!("every {rules} rule of networkpolicy {ns}/{name} lets {to} only {label} on {port}"),
        format!(
            "networkpolicy {ns}/{name} has no {rules} rule, or one that lets {to} more than the pods with {label} on {port} (other pods, namespaces, addresses or ports)"
        ),
    )
}

/// `policy <policy> admits <KEY=VALUE> port <port>`: an ingress rule of the policy lets in
/// pods of its namespace carrying this label on this port (its `from` has a podSelector
/// that matches them, or is empty; its `ports` hold the port, or are empty). What the
/// policy says, whatever pods exist and whatever the network enforces.
pub(crate) fn policy_admits(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (key, label, port) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let (ns, name) = key.split_once('/').unwrap_or(("default", key));
    let labels: std::collections::BTreeMap<String, String> = label
        .split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into_iter()
        .collect();
    let Ok((port, proto)) = crate::cluster::policy::parse_port(port) else {
        return yes_no(false, String::new(), format!("{port} is not a port"));
    };
    let Some(holds) = crate::engine::query::policy_admits(lab, key, &labels, (port, proto)) else {
        return yes_no(
            false,
            String::new(),
            format!("networkpolicy {ns}/{name} does not exist"),
        );
    };
    yes_no(
        holds,
        format!(
            "networkpolicy {ns}/{name} admits {label} on {port}/{}",
            proto.as_str()
        ),
        format!(
            "no ingress rule of networkpolicy {ns}/{name} admits pods with {label} on {port}/{}",
            proto.as_str()
        ),
    )
}

/// `policy <policy> selects <KEY=VALUE>`: the NetworkPolicy's podSelector takes exactly
/// the pods with that label (see [`crate::engine::query::policy_selects`]): not every pod,
/// not more values of the key, not fewer pods by a second label.
pub(crate) fn policy_selects(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (key, label) = (arg(a, 0), arg(a, 1));
    let (ns, name) = key.split_once('/').unwrap_or(("default", key));
    let Some((k, v)) = label.split_once('=') else {
        return yes_no(false, String::new(), format!("{label} is not KEY=VALUE"));
    };
    let Some(holds) = crate::engine::query::policy_selects(lab, key, (k, v)) else {
        return yes_no(
            false,
            String::new(),
            format!("networkpolicy {ns}/{name} does not exist"),
        );
    };
    yes_no(
        holds,
        format!("networkpolicy {ns}/{name} selects the pods labelled {label}"),
        format!(
            "networkpolicy {ns}/{name}'s podSelector is not just {label} (it takes every pod, other values, or needs other labels)"
        ),
    )
}

// ---- ch5-core-modules: the conflist in use, leaked leases, a secondary network's address,
// part of a wire value ----

/// `node <node> conf active <file>`: the file of the node's `/etc/cni/net.d` the runtime
/// uses (the first that loads, in lexical order) is this one, whatever view showed it.
pub(crate) fn node_conf_active(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (node, file) = (arg(a, 0), arg(a, 1));
    let Some(active) = crate::engine::node_view::active_conf(lab, node) else {
        return yes_no(false, String::new(), format!("there is no node {node}"));
    };
    match active {
        Ok(f) => yes_no(
            f == file,
            format!("{node}'s runtime uses {file}"),
            format!("{node}'s runtime uses {f}, not {file}"),
        ),
        Err(e) => Eval {
            holds: false,
            actual: format!("{node}'s runtime has no usable config: {e}"),
        },
    }
}

/// `saw ipam <node> leak <net>`: `show ipam` showed, in the node's host-local store of that
/// network, a lease nothing that will ever DEL it accounts for: no pod sandbox, and libcni
/// cached it (if at all) only under a network the node no longer uses, whose chain the
/// runtime will never run again ([`LeaseHolder`](crate::engine::node_view::LeaseHolder)).
pub(crate) fn ipam_leak(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (node, net) = (arg(a, 0), arg(a, 1));
    if let Err(e) = super::check::ipam_dirs(lab, node) {
        return e;
    }
    let leaked = |id: &str, ifname: &str| {
        crate::engine::node_view::lease_holder(lab, node, id, ifname).is_some_and(|h| h.leaked())
    };
    let mut shown = false;
    let holds = seen.seen().any(|s| match s {
        Seen::Ipam(stores) => stores
            .iter()
            .filter(|st| st.node == node && st.net == net)
            .any(|st| {
                shown = true;
                st.leases.iter().any(|(_, id, ifname)| leaked(id, ifname))
            }),
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw a leaked lease in {node}'s {net} store"),
        if shown {
            format!("{node}'s {net} store was shown, with no leaked lease")
        } else {
            format!(
                "{node}'s host-local store of {net} has not been shown during this step (`show ipam {node}`)"
            )
        },
    )
}

/// `saw trace <flow> on <ifname> delivered|dropped|no-route|conflict|left`: a trace from the flow's
/// source to the address the destination pod has on that interface (a secondary network's
/// `net1`, whatever address it got), on the flow's port, ended this way.
pub(crate) fn trace_to_interface(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (flow, ifname, end) = (spec(a), arg(a, 1), arg(a, 2));
    let p = match super::check::pod(lab, &flow.dst) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let link = match super::check::pod_link(lab, &p, ifname) {
        Ok(l) => l,
        Err(e) => return e,
    };
    let addrs: Vec<std::net::IpAddr> = link.addrs.iter().map(|c| c.addr()).collect();
    let primary: Option<std::net::IpAddr> = p.ip;
    let want = match end {
        "delivered" => TraceEnd::Delivered,
        "dropped" => TraceEnd::Dropped,
        "left" => TraceEnd::LeftCluster,
        "conflict" => TraceEnd::Conflict,
        _ => TraceEnd::NoRoute,
    };
    let to_it = |t: &&crate::engine::seen::TraceSeen| {
        endpoint_named(&flow.src, &t.flow.src)
            && t.flow.port == flow.port
            && t.flow.protocol == flow.protocol
            && flow.size.is_none_or(|s| s == t.flow.size)
            && match &t.flow.dst {
                Endpoint::Ip(ip) => addrs.contains(ip),
                Endpoint::Pod(r) => {
                    pod_named(&flow.dst, &r.namespace, &r.name)
                        && primary.is_some_and(|ip| addrs.contains(&ip))
                }
                Endpoint::Node(_) => false,
            }
    };
    let mut ended = Vec::new();
    let holds = seen
        .seen()
        .filter_map(|s| match s {
            Seen::Trace(t) => Some(&**t),
            _ => None,
        })
        .filter(to_it)
        .any(|t| {
            ended.push(t.result.clone());
            t.end == want
        });
    let what = format!(
        "{} → {}'s {ifname} ({}):{}/{}",
        flow.src,
        flow.dst,
        super::check::join_addrs(link.addrs),
        flow.port,
        flow.protocol
    );
    yes_no(
        holds,
        format!("you traced {what}: {end}"),
        match ended.last() {
            Some(r) => format!("your trace of {what} ended: {r}"),
            None => format!("no trace of {what} has been run during this step"),
        },
    )
}

/// The record test of `saw wire <call> <part> <pointer> contains <text>`.
pub(crate) fn json_contains_test(_: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    let (which, ptr, want) = (arg(a, 1), arg(a, 2), arg(a, 3));
    part(rec, which).is_some_and(|v| {
        v.pointer(ptr)
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains(want))
    })
}

/// `saw wire <call> <part> <pointer> contains <text>`: a record of the call shown this step
/// has a string at the JSON pointer holding the text (a path: `/target_path` contains
/// `/volumeDevices/publish/`).
pub(crate) fn wire_json_contains(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, which, ptr, want) = (arg(a, 0), arg(a, 1), arg(a, 2), arg(a, 3));
    let recs = shown_calls(lab, seen, call);
    let holds = recs.iter().any(|r| json_contains_test(lab, r, a));
    yes_no(
        holds,
        format!("you saw {ptr} holding {want:?} in a {call} record's {which}"),
        if recs.is_empty() {
            format!("no {call} record has been shown whole during this step")
        } else {
            format!("the {call} records shown have no {ptr} holding {want:?} in their {which}")
        },
    )
}

#[cfg(test)]
mod ch2_ch7_tests {
    use crate::engine::Lab;
    use crate::lesson::check::{Observed, parse};

    /// Run lines on the lab, recording them as a step's commands.
    fn run(lab: &mut Lab, seen: &mut Observed, lines: &[&str]) {
        for l in lines {
            let ran = lab.run(l);
            seen.record(l, &ran);
        }
    }

    fn holds(lab: &Lab, seen: &Observed, check: &str) -> bool {
        parse(1, check).unwrap().eval(lab, seen).holds
    }

    /// Whether a step with these checks is done.
    fn step_done(lab: &Lab, seen: &Observed, checks: &[&str]) -> bool {
        let checks: Vec<_> = checks.iter().map(|c| parse(1, c).unwrap()).collect();
        crate::lesson::check::eval_all(&checks, lab, seen).is_ok()
    }

    #[test]
    fn a_step_s_facts_about_a_call_must_all_be_in_one_record() {
        let size = "saw wire CreateVolume request /capacity_range/required_bytes '\"10737418240\"'";
        let param = "saw wire CreateVolume request /parameters/type ssd";
        let mut lab = Lab::new();
        let mut seen = Observed::default();
        // The claim's call carries the size, a call made by hand the parameter.
        run(
            &mut lab,
            &mut seen,
            &[
                "pvc create data --size 10Gi",
                "show wire --last CreateVolume",
                "csi create-volume fake --size 1Gi --param type=ssd",
            ],
        );
        assert!(holds(&lab, &seen, size) && holds(&lab, &seen, param));
        assert!(!step_done(&lab, &seen, &[size, param]), "two records");
        // One call carrying both.
        run(
            &mut lab,
            &mut seen,
            &["csi create-volume both --size 10Gi --param type=ssd"],
        );
        assert!(step_done(&lab, &seen, &[size, param]));
        // A call made by hand is not the claim's.
        let claim = "saw wire CreateVolume for pvc data";
        assert!(holds(&lab, &seen, claim));
        assert!(!step_done(&lab, &seen, &[claim, size, param]));
    }

    #[test]
    fn an_error_is_the_command_s_own_and_its_reason() {
        let mut lab = Lab::new();
        let mut seen = Observed::default();
        let check = "saw error \"cni add c1 --node node-1\" cni:999 \"already exists\"";
        run(&mut lab, &mut seen, &["cni add c1 --node node-1"]);
        assert!(!holds(&lab, &seen, check), "it succeeded");
        // An echo, a usage error and the same ADD on another node fail nothing of this.
        run(
            &mut lab,
            &mut seen,
            &[
                "echo cni add c1 --node node-1 cni:999 already exists",
                "cni add c1 --node node-1 --nope",
                "cni add c1 --node node-2",
                "cni add c1 --node node-2",
            ],
        );
        assert!(!holds(&lab, &seen, check));
        run(&mut lab, &mut seen, &["cni add c1 --node node-1"]);
        assert!(holds(&lab, &seen, check));
        assert!(!holds(
            &lab,
            &seen,
            "saw error \"cni add c1 --node node-1\" cni:11"
        ));
        // API and CSI reasons by name.
        run(
            &mut lab,
            &mut seen,
            &[
                "pod create web --node node-1",
                "label pod web a=b --resource-version 1",
                "csi node-unstage vol-nope --node node-1",
            ],
        );
        assert!(holds(
            &lab,
            &seen,
            "saw error \"label pod web a=b --resource-version 1\" api:Conflict"
        ));
        assert!(holds(
            &lab,
            &seen,
            "saw error \"csi node-unstage vol-nope --node node-1\" csi:NOT_FOUND"
        ));
    }

    #[test]
    fn a_method_path_is_seen_only_in_show_wire() {
        let mut lab = Lab::new();
        let mut seen = Observed::default();
        let check = "saw wire Probe method /csi.v1.Identity/Probe";
        run(&mut lab, &mut seen, &["csi probe"]);
        assert!(holds(&lab, &seen, "saw wire Probe response /ready true"));
        assert!(
            !holds(&lab, &seen, check),
            "the raw call prints the reply only"
        );
        run(&mut lab, &mut seen, &["show wire"]);
        assert!(holds(&lab, &seen, check));
        assert!(!holds(
            &lab,
            &seen,
            "saw wire Probe method /csi.v1.Identity/GetPluginInfo"
        ));
    }

    #[test]
    fn watch_events_and_volumes_are_what_their_views_listed() {
        let mut lab = Lab::new();
        let mut seen = Observed::default();
        run(
            &mut lab,
            &mut seen,
            &[
                "pvc create data --size 1Gi",
                "pod create a --node node-2 --pvc data",
                "pod create b --node node-2 --pvc data",
                "pod delete b",
                "echo DELETED Pod default/b PUBLISHED",
            ],
        );
        let watch = "saw watch DELETED Pod default/b";
        let state = "saw volume data on node-2 state PUBLISHED";
        assert!(!holds(&lab, &seen, watch));
        assert!(!holds(&lab, &seen, state));
        run(&mut lab, &mut seen, &["show watch", "show volumes node-2"]);
        assert!(holds(&lab, &seen, watch));
        assert!(!holds(&lab, &seen, "saw watch DELETED Pod default/a"));
        assert!(holds(&lab, &seen, state));
        assert!(holds(&lab, &seen, "saw volume data on node-2 targets 1"));
        assert!(!holds(
            &lab,
            &seen,
            "saw volume data on node-1 state PUBLISHED"
        ));
        // `show watch --since` past the deletion lists nothing of it.
        let mut later = Observed::default();
        run(&mut lab, &mut later, &["show watch --since 1000"]);
        assert!(!holds(&lab, &later, watch));
    }

    #[test]
    fn what_a_policy_admits_is_read_from_its_rules() {
        let mut lab = Lab::new();
        let seen = Observed::default();
        let admits = |lab: &Lab, c: &str| holds(lab, &seen, c);
        assert!(!admits(&lab, "policy p admits app=api port 5432"));
        lab.execute("policy create p --select app=db --ingress-from app=api --port 5432/TCP")
            .unwrap();
        assert!(admits(&lab, "policy p admits app=api port 5432/tcp"));
        assert!(!admits(&lab, "policy p admits app=web port 5432"));
        assert!(!admits(&lab, "policy p admits app=api port 5433"));
        assert!(!admits(&lab, "policy p admits app=api port 5432/UDP"));
        lab.execute("policy create open --select app=db --types Ingress")
            .unwrap();
        assert!(
            !admits(&lab, "policy open admits app=api port 80"),
            "no rule admits nothing"
        );
    }
}

// ---- for the chapter 3 lessons (CNI across nodes; CSI, Multus and SR-IOV) ----

/// `pod <pod> network <name>`: the network (the conflist's `name`) the runtime set up the
/// pod's `eth0` with, as libcni's result cache keys it (`lab-net`, `lab-net-v110`,
/// `k8s-pod-network`, `multus-cni-network`).
pub(crate) fn pod_network(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match super::check::pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let want = arg(a, 1);
    let nets: Vec<&str> = p
        .sandbox_id
        .map(|id| crate::engine::node_view::cached_networks(lab, p.node, id, "eth0"))
        .unwrap_or_default();
    yes_no(
        nets.contains(&want),
        format!("pod {}'s eth0 was set up on network {want}", p.key),
        match nets.as_slice() {
            [] => format!("pod {} has no network set up (no sandbox)", p.key),
            have => format!(
                "pod {}'s eth0 was set up on network {}",
                p.key,
                have.join(", ")
            ),
        },
    )
}

/// `pod <pod> annotation <KEY=VALUE>`: metadata.annotations has the pair
/// (`k8s.v1.cni.cncf.io/networks=rdma-net`).
pub(crate) fn pod_annotation(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match super::check::pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let (k, v) = arg(a, 1).split_once('=').unwrap_or((arg(a, 1), ""));
    let have = p.annotations.get(k);
    yes_no(
        have.is_some_and(|h| annotation_is(k, h, v)),
        format!("pod {} has the annotation {k}={v}", p.key),
        match have {
            Some(h) => format!("pod {}'s annotation {k} is {h:?}", p.key),
            None => format!("pod {} has no annotation {k}", p.key),
        },
    )
}

/// Whether an annotation's value is the one a check wants: the bandwidth annotations,
/// which containerd reads as resource quantities, by value (`10M` is `10000000`); any
/// other, as written.
fn annotation_is(key: &str, have: &str, want: &str) -> bool {
    use crate::kubelet::sandbox::{EGRESS_BANDWIDTH, INGRESS_BANDWIDTH};
    use crate::util::quantity::Quantity;
    if key == INGRESS_BANDWIDTH || key == EGRESS_BANDWIDTH {
        if let (Some(h), Some(w)) = (Quantity::parse(have), Quantity::parse(want)) {
            return h.cmp_value(&w).is_eq();
        }
    }
    have == want
}

/// `pod <pod> port <HOST:CONTAINER[/PROTO]>`: a host port mapping of the pod as `pod create
/// --port` writes it (`8080:80`: hostPort 8080 to containerPort 80, TCP unless a protocol
/// is given).
pub(crate) fn pod_port(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match super::check::pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let (mapping, protocol) = arg(a, 1).split_once('/').unwrap_or((arg(a, 1), "TCP"));
    let want: Option<(u16, u16)> = mapping
        .split_once(':')
        .and_then(|(h, c)| Some((h.parse().ok()?, c.parse().ok()?)));
    let shown: Vec<String> = p
        .host_ports
        .iter()
        .map(|(host, container, proto)| format!("{host}:{container}/{proto}"))
        .collect();
    yes_no(
        p.host_ports.iter().any(|(host, container, proto)| {
            want == Some((*host, *container)) && proto.eq_ignore_ascii_case(protocol)
        }),
        format!("pod {} maps host port {}", p.key, arg(a, 1)),
        if shown.is_empty() {
            format!("pod {} maps no host port", p.key)
        } else {
            format!("pod {} maps {}", p.key, shown.join(", "))
        },
    )
}

/// `node <node> allocatable <resource> <n>`: the Node's status.allocatable has this
/// quantity of the resource (`intel.com/sriov_netdevice 2`, `pods 110`).
pub(crate) fn node_allocatable(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (node, resource, want) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let Some(have) = crate::engine::query::node_allocatable(lab, node, resource) else {
        return yes_no(false, String::new(), format!("there is no node {node}"));
    };
    yes_no(
        have.is_some_and(|h| h == want),
        format!("node {node} has {want} {resource} allocatable"),
        match have {
            Some(h) => format!("node {node} has {h} {resource} allocatable"),
            None => format!("node {node} has no {resource}"),
        },
    )
}

/// The BGP views of `node` this step showed.
fn bgp_shown<'s>(seen: &'s Observed, node: &str) -> Vec<&'s crate::netd::BgpView> {
    seen.seen()
        .filter_map(|s| match s {
            Seen::Bgp { node: n, view } if n == node => Some(view),
            _ => None,
        })
        .collect()
}

/// `saw bgp <node> peer <ip> up|start`: `show bgp` showed the node's mesh session to that
/// peer in that state (`calicoctl node status`).
pub(crate) fn bgp_peer(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (node, peer, state) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let addr: Option<std::net::Ipv4Addr> = peer.parse().ok();
    let views = bgp_shown(seen, node);
    let holds = views.iter().any(|v| {
        v.peers
            .iter()
            .any(|p| Some(p.addr) == addr && (if p.up { "up" } else { "start" }) == state)
    });
    yes_no(
        holds,
        format!("you saw {node}'s BGP session to {peer} {state}"),
        if views.is_empty() {
            format!("{node}'s BGP status has not been shown during this step (`show bgp {node}`)")
        } else {
            format!("{node}'s BGP status was shown, without a session to {peer} in state {state}")
        },
    )
}

/// `saw bgp <node> route <block> via <peer>`: `show bgp` showed BIRD on the node holding a
/// route to that block via that peer, reachable on eth0 (`birdcl show route`).
pub(crate) fn bgp_route(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::netd::NextHop;
    let (node, block, via) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let block: Option<ipnet::Ipv4Net> = block.parse().ok();
    let via: Option<std::net::Ipv4Addr> = via.parse().ok();
    let views = bgp_shown(seen, node);
    let holds = views.iter().any(|v| {
        v.routes.iter().any(|r| {
            Some(r.block.trunc()) == block.map(|b| b.trunc())
                && matches!(r.next_hop, NextHop::Via(ip) if Some(ip) == via)
        })
    });
    yes_no(
        holds,
        format!(
            "you saw BIRD on {node} route {} via {}",
            arg(a, 1),
            arg(a, 2)
        ),
        if views.is_empty() {
            format!("{node}'s BGP status has not been shown during this step (`show bgp {node}`)")
        } else {
            format!(
                "{node}'s BGP routes were shown, without {} via {}",
                arg(a, 1),
                arg(a, 2)
            )
        },
    )
}

/// `saw events <actor> <action>`: `show events` showed a call-log entry by that actor
/// (`containerd(node-1)`) with that action (`RunPodSandbox`, `CNI ADD`, an event's reason).
pub fn events(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (actor, action) = (arg(a, 0), arg(a, 1));
    let mut shown = false;
    let holds = seen.seen().any(|s| match s {
        Seen::Events(first, end) => {
            shown = true;
            (*first..*end)
                .filter_map(|seq| lab.calls().get(seq))
                .any(|e| e.actor().is(actor) && e.action() == action)
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw {actor} {action} in the call log"),
        if shown {
            format!("the call log shown during this step has no {action} by {actor}")
        } else {
            "the call log has not been shown during this step (`show events`)".to_string()
        },
    )
}

/// `saw trace <flow> destination rewritten`: netfilter rewrote the destination (DNAT: a
/// host port, a Service) on the way.
pub(crate) fn trace_dnat(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let flow = spec(a);
    let holds = traces(seen, &flow).any(|t| {
        t.rewrites
            .iter()
            .any(|r| matches!(r, crate::net::trace::Rewrite::Destination(..)))
    });
    yes_no(
        holds,
        format!(
            "you saw the destination of {} rewritten on the way",
            flow.name()
        ),
        format!(
            "no trace of {} during this step had its destination rewritten",
            flow.name()
        ),
    )
}

#[cfg(test)]
mod ch3_tests {
    use super::super::check::{Observed, parse};
    use crate::engine::Lab;

    /// A lab and what its lines showed.
    struct Run {
        lab: Lab,
        seen: Observed,
    }

    impl Run {
        fn new(lines: &[&str]) -> Run {
            let mut r = Run {
                lab: Lab::new(),
                seen: Observed::default(),
            };
            r.run(lines);
            r.seen.new_step();
            r
        }

        fn run(&mut self, lines: &[&str]) {
            for l in lines {
                let ran = self.lab.run(l);
                self.seen.record(l, &ran);
            }
        }

        fn holds(&self, check: &str) -> bool {
            let c = parse(1, check).unwrap_or_else(|e| panic!("{e}"));
            c.eval(&self.lab, &self.seen).holds
        }
    }

    #[test]
    fn a_pod_s_network_annotations_and_ports_are_state() {
        let r = Run::new(&[
            "pod create old --node node-1 --port 8080:80 --bandwidth-ingress 10M",
            "network multus on",
            "pod create m --node node-2",
        ]);
        assert!(r.holds("pod old network lab-net"));
        assert!(!r.holds("pod old network lab-net-v110"));
        assert!(r.holds("pod m network multus-cni-network"));
        assert!(!r.holds("pod nobody network lab-net"));
        assert!(r.holds("pod old annotation kubernetes.io/ingress-bandwidth=10M"));
        assert!(!r.holds("pod old annotation kubernetes.io/ingress-bandwidth=20M"));
        assert!(!r.holds("pod m annotation kubernetes.io/ingress-bandwidth=10M"));
        // The bandwidth annotations are quantities: 10M is 10000000 and 10000k, not 10Mi.
        assert!(r.holds("pod old annotation kubernetes.io/ingress-bandwidth=10000000"));
        assert!(r.holds("pod old annotation kubernetes.io/ingress-bandwidth=10000k"));
        assert!(!r.holds("pod old annotation kubernetes.io/ingress-bandwidth=10Mi"));
        assert!(!r.holds("pod old annotation kubernetes.io/egress-bandwidth=10M"));
        assert!(r.holds("pod old port 8080:80"));
        assert!(!r.holds("pod old port 9090:80"));
        assert!(r.holds("pod old port 8080:80/tcp"));
        assert!(!r.holds("pod old port 8080:80/UDP"));
        assert!(!r.holds("pod m port 8080:80"));
    }

    #[test]
    fn allocatable_extended_resources_are_the_node_s() {
        let r = Run::new(&[
            "node add gpu-1 --cidr 10.244.4.0/24 --ip 192.168.0.4 --sriov-pf ens1f0 --vfs 2",
        ]);
        assert!(r.holds("node gpu-1 allocatable intel.com/sriov_netdevice 2"));
        assert!(!r.holds("node gpu-1 allocatable intel.com/sriov_netdevice 3"));
        assert!(!r.holds("node node-1 allocatable intel.com/sriov_netdevice 2"));
        assert!(!r.holds("node gpu-9 allocatable intel.com/sriov_netdevice 2"));
    }

    #[test]
    fn bgp_rows_are_seen_only_from_that_node_s_view() {
        let mut r = Run::new(&[
            "network use calico-bgp",
            "pod create a --node node-1",
            "pod create b --node node-2",
        ]);
        let session = "saw bgp node-1 peer 192.168.0.2 up";
        let route = "saw bgp node-1 route 10.244.176.64/26 via 192.168.0.2";
        r.run(&[
            "echo '| 192.168.0.2 | node-to-node mesh | up | 10.244.176.64/26 via 192.168.0.2 on eth0'",
            "show bgp node-2",
            "show routes node-1",
        ]);
        assert!(!r.holds(session) && !r.holds(route));
        r.run(&["show bgp node-1"]);
        assert!(r.holds(session) && r.holds(route));
        assert!(!r.holds("saw bgp node-1 peer 192.168.0.1 up"));
        assert!(!r.holds("saw bgp node-1 peer 192.168.0.2 start"));
        assert!(!r.holds("saw bgp node-1 route 10.244.176.64/26 via 192.168.0.3"));
        // Under flannel there is no BGP to show: the view fails and shows nothing.
        let mut f = Run::new(&[]);
        f.run(&["show bgp node-1"]);
        assert!(!f.holds("saw bgp node-1 peer 192.168.0.2 up"));
    }

    #[test]
    fn the_call_log_seen_names_actor_and_action() {
        let mut r = Run::new(&["pod create web --node node-1"]);
        let check = "saw events containerd(node-1) RunPodSandbox";
        r.run(&["echo 'containerd(node-1) RunPodSandbox'"]);
        assert!(!r.holds(check), "echo shows nothing");
        r.run(&["show events"]);
        assert!(r.holds(check));
        assert!(r.holds("saw events containerd(node-1) \"CNI ADD\""));
        assert!(!r.holds("saw events containerd(node-2) RunPodSandbox"));
        assert!(!r.holds("saw events kubelet(node-1) RunPodSandbox"));
        // Entries older than the ones shown are not seen.
        let mut n = Run::new(&[
            "pod create web --node node-1",
            "pod create db --node node-2",
        ]);
        n.run(&["show events -n 3"]);
        assert!(!n.holds(check));
    }

    #[test]
    fn a_host_port_s_dnat_is_a_rewritten_destination() {
        let mut r = Run::new(&[
            "pod create api --node node-1 --port 8080:80",
            "pod create slow --node node-2",
        ]);
        let dnat = "saw trace \"slow node-1 --port 8080\" destination rewritten";
        r.run(&["trace slow node-1 --port 9090", "trace slow api"]);
        assert!(!r.holds(dnat));
        assert!(!r.holds("saw trace \"slow api\" destination rewritten"));
        r.run(&["trace slow node-1 --port 8080"]);
        assert!(r.holds(dnat));
    }
}

// ---- lessons ch4-runtime-workflow and ch6-source-walkthrough ----

/// The record test of `saw wire <call> on <node>`.
pub(crate) fn on_test(_: &Lab, rec: &WireRecord, a: &[String]) -> bool {
    rec.node() == Some(arg(a, 1))
}

/// `saw wire <call> on <node>`: a record of the call shown this step ran on the node (a CNI
/// plugin's node; the node plugin a CSI Node call went to).
pub(crate) fn wire_on(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, node) = (arg(a, 0), arg(a, 1));
    let recs = shown_calls(lab, seen, call);
    let holds = recs.iter().any(|r| on_test(lab, r, a));
    let nodes: Vec<&str> = recs.iter().filter_map(|r| r.node()).collect();
    yes_no(
        holds,
        format!("you saw a {call} record from {node}"),
        if recs.is_empty() {
            format!("no {call} record has been shown whole during this step")
        } else if nodes.is_empty() {
            format!("the {call} records shown ran on no node")
        } else {
            format!("the {call} records shown ran on {}", nodes.join(", "))
        },
    )
}

/// `saw wire <call> <n> times`: at least n different records of the call, each answered
/// without an error, were shown whole this step (a raw `csi`/`cni` command shows the record
/// it made, so a call repeated shows two).
pub(crate) fn wire_times(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (call, want) = (arg(a, 0), arg(a, 1).parse::<usize>().unwrap_or(usize::MAX));
    let mut seqs: Vec<u64> = wire_shown(seen)
        .into_iter()
        .filter(|s| {
            lab.wire()
                .get(*s)
                .is_some_and(|r| is_call(r, call) && !r.failed())
        })
        .collect();
    seqs.sort_unstable();
    seqs.dedup();
    yes_no(
        seqs.len() >= want,
        format!("you saw {} {call} records that answered", seqs.len()),
        format!(
            "{} {call} record(s) that answered shown whole during this step, not {want}",
            seqs.len()
        ),
    )
}

/// `saw ipam <node> lease of <pod>`: `show ipam` showed the node's host-local store with
/// the pod's lease: its address, held by its sandbox's container ID.
pub(crate) fn ipam_lease_of(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (node, pod) = (arg(a, 0), arg(a, 1));
    let p = match super::check::pod(lab, pod) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let ip = p.ip;
    let sandbox = p.sandbox_id;
    let holds = seen.seen().any(|s| match s {
        Seen::Ipam(stores) => stores.iter().any(|st| {
            st.node == node
                && st
                    .leases
                    .iter()
                    .any(|(l, id, _)| Some(*l) == ip && Some(id.as_str()) == sandbox)
        }),
        _ => false,
    });
    yes_no(
        holds,
        format!("you saw pod {}'s lease in {node}'s host-local store", p.key),
        format!(
            "no `show ipam {node}` of this step showed pod {}'s lease ({})",
            p.key,
            match p.ip {
                None => "it has no IP".to_string(),
                Some(ip) => ip.to_string(),
            }
        ),
    )
}

/// `pvc <pvc> used by <pod>`: a volume of the pod's spec names the claim (in the pod's
/// namespace).
pub(crate) fn pvc_used_by(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match super::check::pod(lab, arg(a, 1)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let want = arg(a, 0);
    let (ns, claim) = want.split_once('/').unwrap_or((p.namespace, want));
    let claims = &p.claims;
    let holds = ns == p.namespace && claims.contains(&claim);
    yes_no(
        holds,
        format!("pod {} uses claim {want}", p.key),
        if claims.is_empty() {
            format!("pod {} uses no claim", p.key)
        } else {
            format!("pod {} uses claim(s) {}", p.key, claims.join(", "))
        },
    )
}

/// `pvc <claim> used by <pod> read-only`: the pod's volume names the claim read-only.
pub(crate) fn pvc_used_read_only(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match super::check::pod(lab, arg(a, 1)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let claim = arg(a, 0);
    let holds = p.read_only_claims.contains(&claim);
    yes_no(
        holds,
        format!("pod {} mounts claim {claim} read-only", p.key),
        if p.claims.contains(&claim) {
            format!(
                "pod {} mounts claim {claim} read-write (`--pvc {claim}:ro` mounts it read-only)",
                p.key
            )
        } else {
            format!("pod {} does not use claim {claim}", p.key)
        },
    )
}

#[cfg(test)]
mod ch4_ch6_tests {
    use super::*;

    /// Run lines on the lab, recording them as one step's commands.
    fn step(lab: &mut Lab, lines: &[&str]) -> Observed {
        let mut seen = Observed::default();
        for l in lines {
            let ran = lab.run(l);
            seen.record(l, &ran);
        }
        seen
    }

    fn holds(lab: &Lab, seen: &Observed, check: &str) -> bool {
        super::super::check::parse(1, check)
            .unwrap_or_else(|e| panic!("{e}"))
            .eval(lab, seen)
            .holds
    }

    #[test]
    fn a_refused_raw_add_shows_its_records_and_a_usage_error_shows_none() {
        let mut lab = Lab::new();
        let seen = step(
            &mut lab,
            &[
                "cni add c1 --node node-1",
                "cni add c2 --node node-1 --ifname net1",
                "cni add c1 --node node-1 --netns /var/run/netns/c2",
            ],
        );
        assert!(!seen.runs[2].ok());
        assert!(holds(
            &lab,
            &seen,
            "saw wire host-local:ADD stdout /code 999"
        ));
        assert!(holds(&lab, &seen, "saw wire host-local:ADD on node-1"));
        assert!(!holds(&lab, &seen, "saw wire host-local:ADD on node-2"));
        let seen = step(&mut lab, &["cni add c3 --node node-1 --no-such-flag"]);
        assert!(!holds(&lab, &seen, "saw wire ADD"));
    }

    #[test]
    fn times_counts_the_calls_that_answered() {
        let mut lab = Lab::new();
        lab.execute("pvc create data --size 1Gi").unwrap();
        // The driver put `data` on node-2: publishing it to node-1 is NOT_FOUND, twice.
        let publish = |node: &str| format!("csi controller-publish pvc/data --node {node}");
        let seen = step(&mut lab, &[&publish("node-1"), &publish("node-1")]);
        assert!(!holds(
            &lab,
            &seen,
            "saw wire ControllerPublishVolume 1 times"
        ));
        let seen = step(&mut lab, &[&publish("node-2"), &publish("node-1")]);
        assert!(holds(
            &lab,
            &seen,
            "saw wire ControllerPublishVolume 1 times"
        ));
        assert!(!holds(
            &lab,
            &seen,
            "saw wire ControllerPublishVolume 2 times"
        ));
        // The same record shown again is one record.
        let seen = step(
            &mut lab,
            &[
                &publish("node-2"),
                "show wire --last ControllerPublishVolume",
            ],
        );
        assert!(!holds(
            &lab,
            &seen,
            "saw wire ControllerPublishVolume 2 times"
        ));
        let seen = step(&mut lab, &[&publish("node-2"), &publish("node-2")]);
        assert!(holds(
            &lab,
            &seen,
            "saw wire ControllerPublishVolume 2 times"
        ));
    }

    #[test]
    fn a_pod_s_lease_is_seen_in_its_node_s_store_and_its_claim_in_its_spec() {
        let mut lab = Lab::new();
        lab.execute("pvc create data --size 1Gi").unwrap();
        lab.execute("pod create web --node node-2 --pvc data")
            .unwrap();
        lab.execute("pod create api --node node-2").unwrap();
        let seen = step(&mut lab, &["show ipam node-1"]);
        assert!(!holds(&lab, &seen, "saw ipam node-2 lease of web"));
        let seen = step(&mut lab, &["show ipam node-2"]);
        assert!(holds(&lab, &seen, "saw ipam node-2 lease of web"));
        assert!(!holds(&lab, &seen, "saw ipam node-1 lease of web"));
        assert!(!holds(&lab, &seen, "saw ipam node-2 lease of nobody"));
        assert!(holds(&lab, &seen, "pvc data used by web"));
        assert!(holds(&lab, &seen, "pvc default/data used by default/web"));
        assert!(!holds(&lab, &seen, "pvc data used by api"));
        assert!(!holds(&lab, &seen, "pvc team/data used by web"));
    }
}

// ---- the timeline and `why` (issue 39): a rewind past a command, what `diff` listed, the
// chain `why` gave for an object ----

/// `saw rewind past <command>`: a `rewind` this step took the lab back to before an event
/// of this command's shape (any spelling).
pub(crate) fn rewind_past(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let line = arg(a, 0);
    let Some(want) = super::check::shape_of(line) else {
        return no("not a whole command".into());
    };
    let mut rewound = None;
    let holds = seen.seen().any(|s| match s {
        Seen::Rewound { at, past, .. } => {
            rewound = Some(*at);
            past.iter()
                .filter_map(|l| super::check::shape_of(l))
                .any(|s| s.matches(&want))
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("you rewound to before `{line}`"),
        match rewound {
            Some(at) => format!("you rewound to event {at}, which is not before `{line}`"),
            None => "no `rewind` during this step".into(),
        },
    )
}

/// The changes every `diff` of this step listed.
fn diff_changes(seen: &Observed) -> impl Iterator<Item = &crate::engine::diff::Change> {
    seen.seen().flat_map(|s| match s {
        Seen::Diff { changes, .. } => changes.as_slice(),
        _ => &[],
    })
}

/// Whether a `diff` was run this step.
fn diffed(seen: &Observed) -> bool {
    seen.seen().any(|s| matches!(s, Seen::Diff { .. }))
}

/// `saw diff pod <pod> added`: a `diff` this step listed the pod appearing, with the address
/// the pod has now (the moment it compared is the present's, not an older pod's).
pub(crate) fn diff_pod_added(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::engine::diff::Change;
    let want = arg(a, 0);
    let now = crate::engine::query::pod(lab, want).and_then(|p| p.ip);
    let mut listed = None;
    let holds = diff_changes(seen).any(|c| match c {
        Change::Pod {
            key,
            was: None,
            now: Some(p),
        } if pod_named(want, &key.0, &key.1) => {
            listed = Some(p.ip.clone());
            now.is_some_and(|ip| p.ip == ip.to_string())
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("a diff showed pod {want} appear with the address it has"),
        match (listed, now) {
            (Some(ip), Some(has)) => {
                format!("a diff showed pod {want} appear with {ip}, but it has {has} now")
            }
            (Some(ip), None) => {
                format!("a diff showed pod {want} appear with {ip}, but it has no address now")
            }
            (None, _) if diffed(seen) => format!("no diff of this step lists pod {want} appearing"),
            (None, _) => "no `diff` during this step".into(),
        },
    )
}

/// `saw diff rule <node> added|removed <words>`: a `diff` this step listed a rule of the
/// node added (or removed) holding the words in a row of its `-A CHAIN …` form.
pub(crate) fn diff_rule(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::engine::diff::Change;
    let (node, how, spec) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let words: Vec<&str> = spec.split_whitespace().collect();
    let holds = diff_changes(seen).any(|c| match c {
        Change::Rule { key, rule, added } if key.0 == node && *added == (how == "added") => {
            has_words(&format!("-A {} {rule}", key.3), &words)
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("a diff showed the rule `{spec}` {how} on {node}"),
        if diffed(seen) {
            format!("no diff of this step lists a rule `{spec}` {how} on {node}")
        } else {
            "no `diff` during this step".into()
        },
    )
}

/// The chains every `why` of this step showed.
fn why_chains(seen: &Observed) -> impl Iterator<Item = &[crate::engine::why::Link]> {
    seen.seen().filter_map(|s| match s {
        Seen::Why(chain) => Some(chain.as_slice()),
        _ => None,
    })
}

/// Whether a chain holds a CSI call of this RPC (one that made the state, or after which
/// its caller set it).
fn chain_has_call(chain: &[crate::engine::why::Link], rpc: &str) -> bool {
    use crate::engine::why::Link;
    chain.iter().any(|l| match l {
        Link::Wire { rpc: Some(r), .. } | Link::Attached { rpc: r, .. } => *r == rpc,
        _ => false,
    })
}

/// `saw why pv of <pvc> call <rpc>`: `why pv` this step explained the PV made for the
/// claim, back through this CSI call.
pub(crate) fn why_pv(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::engine::why::Link;
    let (pvc, rpc) = (arg(a, 0), arg(a, 1));
    let Some(pv) = crate::engine::query::claim_volume(lab, pvc) else {
        return no(format!("claim {pvc} has no volume"));
    };
    let mut asked = false;
    let holds = why_chains(seen).any(|chain| match chain.first() {
        Some(Link::Pv { name, .. }) if name == pv.name => {
            asked = true;
            chain_has_call(chain, rpc)
        }
        _ => false,
    });
    yes_no(
        holds,
        format!(
            "`why pv` traced claim {pvc}'s volume {} back to {rpc}",
            pv.name
        ),
        if asked {
            format!("`why pv {}` named no {rpc}", pv.name)
        } else {
            format!(
                "no `why pv` of claim {pvc}'s volume ({}) during this step",
                pv.name
            )
        },
    )
}

/// `saw why va of <pvc> on <node> call <rpc>`: `why va` this step explained the
/// VolumeAttachment of the claim's volume to the node, back through this CSI call.
pub(crate) fn why_va(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::engine::why::Link;
    let (pvc, node, rpc) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let Some(volume) = crate::engine::query::claim_volume(lab, pvc) else {
        return no(format!("claim {pvc} has no volume"));
    };
    let mut asked = false;
    let holds = why_chains(seen).any(|chain| match chain.first() {
        Some(Link::Va { pv, node: n, .. }) if pv == volume.name && n == node => {
            asked = true;
            chain_has_call(chain, rpc)
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("`why va` traced claim {pvc}'s attachment to {node} back to {rpc}"),
        if asked {
            format!("`why va` of claim {pvc}'s attachment to {node} named no {rpc}")
        } else {
            format!(
                "no `why va` of the attachment of claim {pvc}'s volume to {node} during this step"
            )
        },
    )
}

/// `saw why route <node> <cidr> lease <peer>`: `why route` this step explained the node's
/// route to the CIDR as written from the peer's lease.
pub(crate) fn why_route_lease(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::engine::why::Link;
    let (node, cidr, peer) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let mut asked = false;
    let holds = why_chains(seen).any(|chain| match chain.first() {
        Some(Link::Route { node: n, route })
            if n == node && crate::engine::query::route_leads_to(route, cidr) =>
        {
            asked = true;
            chain
                .iter()
                .any(|l| matches!(l, Link::PeerLease { peer: p, .. } if p == peer))
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("`why route` traced {node}'s route to {cidr} back to {peer}'s lease"),
        if asked {
            format!("`why route {cidr} --node {node}` did not lead to {peer}'s lease")
        } else {
            format!("no `why route {cidr} --node {node}` during this step")
        },
    )
}

/// The rules of `chain` on `node` that `why rule` explained this step (each chain's first
/// link), with their numbers, as the rule was stored when explained.
fn rules_explained<'a>(
    seen: &'a Observed,
    node: &'a str,
    chain: &'a str,
) -> impl Iterator<Item = (usize, &'a crate::cni::netfilter::XtRule)> + 'a {
    use crate::engine::why::Link;
    why_chains(seen).filter_map(move |links| match links.first() {
        Some(Link::Rule {
            node: n,
            chain: c,
            number,
            rule,
            ..
        }) if n == node && c == chain => Some((*number, rule)),
        _ => None,
    })
}

/// `saw why rule <node> <chain> holding <words>`: `why rule` explained a rule of the chain
/// on the node (the chain's first link) whose `-A CHAIN …` form holds the words in a row.
pub(crate) fn why_rule_holding(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let (node, chain, spec) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let words: Vec<&str> = spec.split_whitespace().collect();
    let explained: Vec<(usize, String)> = rules_explained(seen, node, chain)
        .map(|(number, rule)| (number, format!("-A {chain} {}", rule.text())))
        .collect();
    let holds = explained.iter().any(|(_, r)| has_words(r, &words));
    yes_no(
        holds,
        format!("`why rule` explained a rule of {chain} on {node} holding `{spec}`"),
        if explained.is_empty() {
            format!("no `why rule {chain} … --node {node}` explained a rule during this step")
        } else {
            format!(
                "`why rule` explained rule {} of {chain} on {node}, which does not hold `{spec}`",
                explained
                    .iter()
                    .map(|(n, _)| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
    )
}

/// `saw why rule <node> <chain> matching <spec>`: `why rule` explained a rule of the chain
/// on the node (the chain's first link) whose typed match is the spec's: each of the
/// spec's `[!] -s`, `[!] -d`, `[!] -i`, `[!] -o` and `[!] -p` equals the rule's (addresses
/// compared as networks, as iptables stores them), and its target too when the spec has a
/// `-j`. A rule with the same target and other addresses (flannel's `! -s POD_NET -d
/// POD_NET` masquerade next to the `-s POD_NET ! -d 224.0.0.0/4` one) does not hold.
pub(crate) fn why_rule_matching(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::cni::netfilter::{RuleSpec, Target};
    let (node, chain, spec) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let want = RuleSpec::parse(spec);
    let fits = |have: &RuleSpec| {
        fn same<T: PartialEq>(want: &Option<T>, have: &Option<T>) -> bool {
            want.is_none() || want == have
        }
        same(&want.src, &have.src)
            && same(&want.dst, &have.dst)
            && same(&want.iif, &have.iif)
            && same(&want.oif, &have.oif)
            && same(&want.proto, &have.proto)
            && (want.target == Target::None || want.target == have.target)
    };
    let explained: Vec<(usize, bool)> = rules_explained(seen, node, chain)
        .map(|(number, rule)| (number, fits(rule.spec())))
        .collect();
    let holds = explained.iter().any(|&(_, fits)| fits);
    yes_no(
        holds,
        format!("`why rule` explained the rule of {chain} on {node} that matches `{spec}`"),
        if explained.is_empty() {
            format!("no `why rule {chain} … --node {node}` explained a rule during this step")
        } else {
            format!(
                "`why rule` explained rule {} of {chain} on {node}, whose match is not `{spec}`",
                explained
                    .iter()
                    .map(|(n, _)| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
    )
}

/// `saw why rule <node> <chain> by <writer>`: `why rule` this step followed a rule on the
/// node to this chain and found it written by this component (`portmap`, `ipmasq`,
/// `flanneld` or `felix`).
pub(crate) fn why_rule_by(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::engine::why::Link;
    let (node, chain, writer) = (arg(a, 0), arg(a, 1), arg(a, 2));
    // The chains `why rule` explained on the node this step, and who writes each.
    let mut explained: Vec<(&str, &'static str)> = Vec::new();
    for links in why_chains(seen) {
        if !matches!(links.first(), Some(Link::Rule { node: n, .. }) if n == node) {
            continue;
        }
        for l in links {
            if let Link::Chain {
                chain: c,
                writer: w,
            } = l
            {
                explained.push((c.as_str(), w.component()));
            }
        }
    }
    let holds = explained.iter().any(|&(c, w)| c == chain && w == writer);
    yes_no(
        holds,
        format!("`why rule` on {node} found {chain} written by {writer}"),
        match explained.iter().find(|(c, _)| *c == chain) {
            Some((_, w)) => {
                format!("`why rule` on {node} found {chain} written by {w}, not {writer}")
            }
            None if explained.is_empty() => {
                format!("no `why rule … --node {node}` explained a chain during this step")
            }
            None => format!(
                "`why rule` on {node} explained {}, not {chain}",
                explained
                    .iter()
                    .map(|(c, _)| *c)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    )
}

/// `saw why lease of <pod>`: `why lease` this step explained the pod's address on its node
/// back through host-local's ADD for the pod's sandbox to the command that made it.
pub(crate) fn why_lease_of(lab: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::engine::why::{Link, Origin};
    let p = match super::check::pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let Some(ip) = p.ip else {
        return no(format!("pod {} has no IP", p.key));
    };
    let mut asked = false;
    let holds = why_chains(seen).any(|chain| match chain.first() {
        Some(Link::Lease {
            node, ip: l, container, ..
        }) if node == p.node && *l == ip => {
            asked = true;
            Some(container.as_str()) == p.sandbox_id
                && chain
                    .iter()
                    .any(|l| matches!(l, Link::Wire { seq, .. } if crate::engine::query::is_host_local_add(lab, *seq)))
                && chain
                    .iter()
                    .any(|l| matches!(l, Link::Sandbox { pod, .. } if *pod == p.key))
                && chain
                    .iter()
                    .any(|l| matches!(l, Link::Made(Origin::Event(..))))
        }
        _ => false,
    });
    yes_no(
        holds,
        format!(
            "`why lease` traced pod {}'s address {ip} back to host-local's ADD and the command that made it",
            p.key
        ),
        if asked {
            format!(
                "`why lease {ip} --node {}` did not lead to host-local's ADD for pod {}'s sandbox",
                p.node, p.key
            )
        } else {
            format!(
                "no `why lease {ip} --node {}` (pod {}'s address) during this step",
                p.node, p.key
            )
        },
    )
}

// ---- stepping a packet (issue 39): the hop a stepped trace showed ----

/// `saw step tunnel on <node>`: a hop shown by stepping this step was the one where the
/// node's VXLAN device wraps the packet (the hop carries the outer headers; the peer's
/// tunnel hop unwraps it and carries none).
pub(crate) fn step_tunnel(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::net::trace::HopKind;
    let node = arg(a, 0);
    let mut last = None;
    let holds = seen.seen().any(|s| match s {
        Seen::Stepped { hop, index, of } => {
            last = Some(format!("hop {index}/{of} at {}", hop.at.text()));
            hop.kind == HopKind::Tunnel
                && hop.at.node() == node
                && hop.packet.as_ref().is_some_and(|p| p.outer.is_some())
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("you stepped to the hop where {node} wraps the packet in VXLAN"),
        match last {
            Some(hop) => format!(
                "the last hop you stepped to was {hop}; none was {node} wrapping the packet in VXLAN"
            ),
            None => "no hop stepped during this step (`trace SRC DST --step`, then `step`)".into(),
        },
    )
}

/// `saw step drop at policy on <node>`: a hop shown by stepping this step was the policy
/// check on the node that denied the packet (the hop where the trace ends dropped: Felix's
/// endpoint chain, Cilium's `bpf_lxc`).
pub(crate) fn step_policy_drop(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    use crate::net::trace::HopKind;
    let node = arg(a, 0);
    let mut last = None;
    let holds = seen.seen().any(|s| match s {
        Seen::Stepped { hop, index, of } => {
            last = Some(format!("hop {index}/{of} at {}", hop.at.text()));
            hop.kind == HopKind::Policy && hop.allowed == Some(false) && hop.at.node() == node
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("you stepped to the hop where a policy on {node} drops the packet"),
        match last {
            Some(hop) => format!(
                "the last hop you stepped to was {hop}; none was a policy on {node} dropping the packet"
            ),
            None => {
                "no hop stepped during this step (`trace SRC DST --port P --step`, then `step`)"
                    .into()
            }
        },
    )
}

/// `saw step csi <rpc>`: a call shown by stepping a CSI flow this step (`pod create …
/// --step`, then `step`) was this RPC, and it answered OK.
pub(crate) fn step_csi(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let rpc = arg(a, 0);
    let mut last = None;
    let holds = seen.seen().any(|s| match s {
        Seen::SteppedCall {
            rpc: r,
            node,
            code,
            index,
            of,
            ..
        } => {
            let on = node
                .as_deref()
                .map(|n| format!(" on {n}"))
                .unwrap_or_default();
            last = Some(format!("call {index}/{of}, {r}{on} ({})", code.name()));
            *r == rpc && *code == crate::csi::Code::Ok
        }
        _ => false,
    });
    yes_no(
        holds,
        format!("you stepped to the {rpc} call and it answered OK"),
        match last {
            Some(call) => format!(
                "the last call you stepped to was {call}; none was {rpc} answering OK"
            ),
            None => "no CSI call stepped during this step (`pod create NAME --pvc CLAIM --step`, then `step`)".into(),
        },
    )
}

/// A check that cannot hold, and why.
fn no(actual: String) -> Eval {
    Eval {
        holds: false,
        actual,
    }
}
