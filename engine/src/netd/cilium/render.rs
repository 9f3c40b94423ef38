//! The agent's CLI views and drop lines, byte for byte in the shapes `cilium-dbg` and
//! `hubble` print (`cilium-dbg/cmd/bpf_policy_get.go`, `bpf_ipcache_list.go`,
//! `endpoint_list.go`, `identity.go`; `pkg/monitor/datapath_drop.go`;
//! `hubble/pkg/printer/printer.go`). All tables go through [`tabwrite`], a port of Go's
//! `text/tabwriter`, with the writer settings each command uses.
//!
//! Where Cilium prints in map order (ipcache entries, policy entries that tie in its sort),
//! the lab sorts, so output is the same on every run.

use super::identity::{ID_UNKNOWN, IdentityTable, NumericIdentity, reserved_name};
use super::policymap::{PolicyKey, TrafficDirection};
use super::{Cilium, CiliumEndpoint, NodeAgent};
use crate::net::policy::Protocol;
use std::fmt::Write as _;
use std::net::IpAddr;

/// Go's `text/tabwriter` with `tabwidth` 0, pad character `' '` and no flags: cells are
/// tab-terminated; a column block is a run of consecutive lines that have a cell in that
/// column; each cell is padded to the block's widest cell + `padding`, at least `minwidth`.
/// The text after a line's last tab is not part of any column. Widths count characters.
pub(crate) fn tabwrite(text: &str, minwidth: usize, padding: usize) -> String {
    let lines: Vec<Vec<&str>> = text.split('\n').map(|l| l.split('\t').collect()).collect();
    let mut w = TabWriter {
        lines: &lines,
        minwidth,
        padding,
        widths: Vec::new(),
        out: String::new(),
    };
    w.format(0, lines.len());
    w.out
}

struct TabWriter<'a> {
    lines: &'a [Vec<&'a str>],
    minwidth: usize,
    padding: usize,
    widths: Vec<usize>,
    out: String,
}

impl TabWriter<'_> {
    /// `(*Writer).format`: find the column blocks of column `widths.len()` in
    /// `line0..line1`, and recurse into each with its width pushed.
    fn format(&mut self, mut line0: usize, line1: usize) {
        let column = self.widths.len();
        let mut this = line0;
        while this < line1 {
            if column + 1 >= self.lines[this].len() {
                this += 1;
                continue;
            }
            self.write_lines(line0, this);
            line0 = this;
            let mut width = self.minwidth;
            while this < line1 {
                let line = &self.lines[this];
                if column + 1 >= line.len() {
                    break;
                }
                width = width.max(line[column].chars().count() + self.padding);
                this += 1;
            }
            self.widths.push(width);
            self.format(line0, this);
            self.widths.pop();
            line0 = this;
        }
        self.write_lines(line0, line1);
    }

    /// `(*Writer).writeLines`, left-aligned, space padding.
    fn write_lines(&mut self, line0: usize, line1: usize) {
        for i in line0..line1 {
            for (j, cell) in self.lines[i].iter().enumerate() {
                self.out.push_str(cell);
                if let Some(width) = self.widths.get(j) {
                    let pad = width.saturating_sub(cell.chars().count());
                    self.out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            if i + 1 < self.lines.len() {
                self.out.push('\n');
            }
        }
    }
}

/// The message `cilium bpf policy get` prints under the header when the map is empty.
pub(crate) const POLICY_EMPTY: &str =
    "Policy stats empty. Perhaps the policy enforcement is disabled?\n";
/// What `cilium bpf ipcache list` prints (to stderr) for an empty map.
pub(crate) const IPCACHE_EMPTY: &str = "No entries found.\n";

/// The label lines of an identity for a table: sorted printable labels, or the number when
/// the agent cannot resolve it.
fn label_lines(ids: &IdentityTable, id: NumericIdentity) -> Vec<String> {
    ids.get(id)
        .map(|i| i.printable())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| vec![id.to_string()])
}

/// `cilium bpf policy get <EP>`, the release with the POLICY and AUTH TYPE columns but no
/// COOKIE column (v1.17/v1.18 shape): tabwriter(5, 0, 3); rows sorted deny first, then
/// Ingress before Egress, then identity ascending (`PolicyEntriesDump.Less`; the lab
/// breaks remaining ties by protocol, port and prefix); `reserved:unknown` prints as
/// `ANY`; extra labels go on continuation rows. BYTES and PACKETS are the lab's counters
/// (0: it does not count packets yet). `numeric` is `-n`: the IDENTITY column instead of
/// labels.
pub(crate) fn bpf_policy_get(ids: &IdentityTable, ep: &CiliumEndpoint, numeric: bool) -> String {
    let mut rows: Vec<(&PolicyKey, &super::PolicyEntry)> = ep.policy.entries.iter().collect();
    rows.sort_by_key(|(k, e)| {
        (
            !e.deny,
            k.direction,
            k.identity,
            k.proto,
            k.dport,
            k.prefix_len,
        )
    });
    let mut t = String::new();
    let title = if numeric {
        "IDENTITY"
    } else {
        "LABELS (source:key[=value])"
    };
    let _ = writeln!(
        t,
        "POLICY\tDIRECTION\t{title}\tPORT/PROTO\tPROXY PORT\tAUTH TYPE\tBYTES\tPACKETS\tPREFIX\t"
    );
    for (k, e) in rows {
        let policy = if e.deny { "Deny" } else { "Allow" };
        let proxy = if e.proxy_port == 0 {
            "NONE".to_string()
        } else {
            e.proxy_port.to_string()
        };
        let rest = format!(
            "{}\t{proxy}\tdisabled\t{}\t{}\t{}\t",
            k.port_proto(),
            e.bytes,
            e.packets,
            k.prefix_len
        );
        let dir = k.direction.as_str();
        if numeric {
            let _ = writeln!(t, "{policy}\t{dir}\t{}\t{rest}", k.identity);
            continue;
        }
        for (i, l) in label_lines(ids, k.identity).iter().enumerate() {
            let l = if l == "reserved:unknown" { "ANY" } else { l };
            if i == 0 {
                let _ = writeln!(t, "{policy}\t{dir}\t{l}\t{rest}");
            } else {
                let _ = writeln!(t, "\t\t{l}\t\t\t\t\t\t\t");
            }
        }
    }
    // tabwriter.NewWriter(os.Stdout, 5, 0, 3, ' ', 0)
    let mut out = tabwrite(&t, 5, 3);
    if ep.policy.entries.is_empty() {
        out.push_str(POLICY_EMPTY);
    }
    out
}

/// `cilium bpf ipcache list`: `TablePrinter` (tabwriter(5, 0, 3)), header and rows
/// tab-terminated, values `identity=%d encryptkey=%d tunnelendpoint=%s flags=%s`. Cilium
/// prints a Go map in random order; the lab sorts by prefix. An empty map prints
/// [`IPCACHE_EMPTY`] (on stderr in Cilium).
pub(crate) fn bpf_ipcache_list(agent: &NodeAgent) -> String {
    if agent.ipcache.entries.is_empty() {
        return IPCACHE_EMPTY.to_string();
    }
    let mut t = String::from("IP PREFIX/ADDRESS\tIDENTITY\t\n");
    for e in agent.ipcache.entries.values() {
        let _ = writeln!(
            t,
            "{}\tidentity={} encryptkey={} tunnelendpoint={} flags={}\t",
            e.prefix,
            e.identity,
            e.encrypt_key,
            e.tunnel_endpoint,
            e.flags_text()
        );
    }
    tabwrite(&t, 5, 3)
}

/// `cilium endpoint list`: tabwriter(5, 0, 3), the two-line header (ENFORCEMENT under both
/// POLICY columns), endpoints by ID, security labels sorted one per line, IPv6 empty
/// (IPv4-only lab), STATUS `ready`. The host and health endpoints the real list also
/// shows are not modelled.
pub(crate) fn endpoint_list(ids: &IdentityTable, agent: &NodeAgent) -> String {
    let mut t = String::from(
        "ENDPOINT\tPOLICY (ingress)\tPOLICY (egress)\tIDENTITY\tLABELS (source:key[=value])\tIPv6\tIPv4\tSTATUS\t\n\tENFORCEMENT\tENFORCEMENT\t\t\t\t\t\n",
    );
    let mode = |on: bool| if on { "Enabled" } else { "Disabled" };
    for ep in agent.endpoints.values() {
        let labels = label_lines(ids, ep.identity);
        for (i, l) in labels.iter().enumerate() {
            if i == 0 {
                let _ = writeln!(
                    t,
                    "{}\t{}\t{}\t{}\t{l}\t\t{}\tready\t",
                    ep.id,
                    mode(ep.policy.enforcement.ingress),
                    mode(ep.policy.enforcement.egress),
                    ep.identity,
                    ep.ip
                );
            } else {
                let _ = writeln!(t, "\t\t\t\t{l}\t\t\t\t");
            }
        }
    }
    tabwrite(&t, 5, 3)
}

/// `cilium identity list`: tabwriter(2, 0, 3), `ID\tLABELS`, identities by number with
/// their sorted labels, extra labels on `\t<label>` rows (`cilium-dbg/cmd/identity.go`,
/// `printIdentities`). Identity 0 is not listed.
pub(crate) fn identity_list(ids: &IdentityTable) -> String {
    let mut t = String::from("ID\tLABELS\n");
    for ident in ids.all().filter(|i| i.id != ID_UNKNOWN) {
        for (i, l) in ident.printable().iter().enumerate() {
            if i == 0 {
                let _ = writeln!(t, "{}\t{l}", ident.id);
            } else {
                let _ = writeln!(t, "\t{l}");
            }
        }
    }
    tabwrite(&t, 2, 3)
}

/// One packet, as the drop notifications describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// Source address.
    pub src: IpAddr,
    /// Source port.
    pub sport: u16,
    /// Destination address.
    pub dst: IpAddr,
    /// Destination port.
    pub dport: u16,
    /// Protocol.
    pub proto: Protocol,
}

/// The source line bpf_lxc reports for a policy drop. Composed: the line moves with every
/// release (the reference's sample uses 2079).
pub(crate) const BPF_LXC_POLICY_DROP_LINE: u32 = 2079;

/// A policy drop as the datapath notifies it (`struct drop_notify`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DropEvent {
    /// Where it was dropped.
    pub direction: TrafficDirection,
    /// The reason (133 unless a deny entry matched).
    pub reason: super::DropReason,
    /// Source identity.
    pub src_identity: NumericIdentity,
    /// Destination identity.
    pub dst_identity: NumericIdentity,
    /// The destination endpoint ID (`DstID`): the endpoint for an ingress drop, 0 for an
    /// egress drop (bpf_lxc passes 0 there).
    pub dst_endpoint: u16,
    /// The interface index the packet was on (the lab passes what it has; 0 if none).
    pub ifindex: u32,
    /// The packet.
    pub packet: Packet,
    /// `namespace/pod` of the source, when it is a pod (for Hubble).
    pub src_pod: Option<String>,
    /// `namespace/pod` of the destination, when it is a pod.
    pub dst_pod: Option<String>,
}

impl Cilium {
    #[cfg(test)]
    /// The drop notification for a packet, if the policy maps drop it (egress first).
    pub(crate) fn drop_event(&self, packet: Packet) -> Option<DropEvent> {
        let v = self.flow(packet.src, packet.dst, packet.proto, Some(packet.dport));
        let (direction, side) = v.dropped_at()?;
        let (peer, reason) = match side.verdict {
            super::MapVerdict::Drop { peer, reason } => (peer, reason),
            super::MapVerdict::Allow { .. } => return None,
        };
        let (src_identity, dst_identity, dst_endpoint) = match direction {
            TrafficDirection::Egress => (side.identity, peer, 0),
            TrafficDirection::Ingress => (peer, side.identity, side.endpoint),
        };
        Some(DropEvent {
            direction,
            reason,
            src_identity,
            dst_identity,
            dst_endpoint,
            ifindex: 0,
            packet,
            src_pod: self.endpoint_by_ip(packet.src).map(CiliumEndpoint::pod_key),
            dst_pod: self.endpoint_by_ip(packet.dst).map(CiliumEndpoint::pod_key),
        })
    }
}

/// `NumericIdentity.String`: a reserved identity by name, others by number.
fn identity_text(id: NumericIdentity) -> String {
    match reserved_name(id) {
        Some(n) => n.to_string(),
        None => id.to_string(),
    }
}

fn summary_proto(p: Protocol) -> &'static str {
    match p {
        Protocol::Tcp => "tcp",
        Protocol::Udp => "udp",
        Protocol::Sctp => "sctp",
    }
}

impl DropEvent {
    /// The `cilium monitor --type drop` line (`DropNotify.DumpInfo`), flow hash 0: `xx drop
    /// (Policy denied) flow 0x0 to endpoint 1234, ifindex 17, file bpf_lxc.c:2079, ,
    /// identity 23017->48312: 10.0.2.57:43516 -> 10.0.1.23:80 tcp SYN`. The doubled `, ,`
    /// is Cilium's; TCP packets are the connection's SYN.
    pub(crate) fn monitor_line(&self) -> String {
        let p = &self.packet;
        let flags = if p.proto == Protocol::Tcp { " SYN" } else { "" };
        format!(
            "xx drop ({}) flow 0x0 to endpoint {}, ifindex {}, file bpf_lxc.c:{}, , identity {}->{}: {}:{} -> {}:{} {}{flags}",
            self.reason,
            self.dst_endpoint,
            self.ifindex,
            BPF_LXC_POLICY_DROP_LINE,
            identity_text(self.src_identity),
            identity_text(self.dst_identity),
            p.src,
            p.sport,
            p.dst,
            p.dport,
            summary_proto(p.proto)
        )
    }

    #[cfg(test)]
    /// The two `hubble observe` compact lines for the drop: the policy verdict, then the
    /// drop (`policy-verdict:none INGRESS DENIED`, `Policy denied DROPPED`). The lab has no
    /// wall clock: the timestamp is `tick` seconds after Jan 1 00:00:00, in Hubble's
    /// `Jan _2 15:04:05.000` layout.
    pub(crate) fn hubble_lines(&self, tick: u64) -> [String; 2] {
        let p = &self.packet;
        let ts = format!(
            "Jan  1 {:02}:{:02}:{:02}.000",
            (tick / 3600) % 24,
            (tick / 60) % 60,
            tick % 60
        );
        let end = |pod: &Option<String>, ip: IpAddr, port: u16, id: NumericIdentity| {
            let who = match pod {
                Some(k) => format!("{k}:{port}"),
                None => format!("{ip}:{port}"),
            };
            match reserved_name(id) {
                Some(n) if id != ID_UNKNOWN => format!("{who} ({n})"),
                _ => format!("{who} (ID:{id})"),
            }
        };
        let src = end(&self.src_pod, p.src, p.sport, self.src_identity);
        let dst = end(&self.dst_pod, p.dst, p.dport, self.dst_identity);
        let summary = match p.proto {
            Protocol::Tcp => "TCP Flags: SYN",
            Protocol::Udp => "UDP",
            Protocol::Sctp => "SCTP",
        };
        let dir = match self.direction {
            TrafficDirection::Ingress => "INGRESS",
            TrafficDirection::Egress => "EGRESS",
        };
        [
            format!("{ts}: {src} -> {dst} policy-verdict:none {dir} DENIED ({summary})"),
            format!("{ts}: {src} -> {dst} {} DROPPED ({summary})", self.reason),
        ]
    }
}
