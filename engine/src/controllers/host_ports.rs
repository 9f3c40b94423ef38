//! The host ports a pod asks for and the ones a node's pods hold: the scheduler's NodePorts
//! filter (`pkg/scheduler/framework/plugins/nodeports`) and the same check in kubelet's
//! admission (`scheduler.AdmissionCheck`, `nodeports.Fits`), over the `HostPortInfo` of
//! `pkg/scheduler/framework/types.go`.
//!
//! A port is (host IP, protocol, host port). A container port with no `hostPort` (0)
//! holds nothing. An empty host IP is `0.0.0.0` and an empty protocol TCP (`sanitize`).
//! Two ports conflict when protocol and port are equal and either IP is `0.0.0.0` or the
//! IPs are equal (`CheckConflict`). The lab's pods carry no `hostIP` (a manifest's is
//! accepted but not modelled), so every port the lab holds is on `0.0.0.0`.

use crate::cluster::PodSpec;
use std::collections::BTreeSet;

/// The wildcard host IP (`DefaultBindAllHostIP`).
const ANY_IP: &str = "0.0.0.0";

/// One host port: (host IP, protocol, port), sanitized.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct HostPort {
    /// The host IP (`0.0.0.0` for any).
    ip: String,
    /// `TCP`, `UDP` or `SCTP`.
    protocol: String,
    /// The port on the node (never 0).
    port: u16,
}

impl HostPort {
    /// A port as `HostPortInfo.Add` keeps it, or none for `hostPort` 0.
    fn new(ip: &str, protocol: &str, port: u16) -> Option<Self> {
        (port != 0).then(|| HostPort {
            ip: if ip.is_empty() { ANY_IP } else { ip }.to_string(),
            protocol: if protocol.is_empty() { "TCP" } else { protocol }.to_string(),
            port,
        })
    }
}

/// The host ports a pod's containers ask for (`getContainerPorts` less the ports with no
/// `hostPort`), in spec order.
pub(crate) fn wanted(spec: &PodSpec) -> Vec<HostPort> {
    spec.containers
        .iter()
        .flat_map(|c| &c.ports)
        .filter_map(|p| HostPort::new("", &p.protocol, p.host_port))
        .collect()
}

/// The host ports a node's pods hold (`NodeInfo.UsedPorts`): a set, as upstream's
/// `HostPortInfo` (`map[ip]map[ProtocolPort]struct{}`) is. `updateUsedPorts` adds a pod's
/// ports when the pod comes and removes them when it goes, whoever else holds them: two
/// pods pinned with `spec.nodeName` to one node can hold the same port, and when one goes
/// the port is free in the scheduler's eyes until the other is written again (its next
/// update adds it back) or the cache is rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct HostPortInfo {
    /// Each port held.
    held: BTreeSet<HostPort>,
}

impl HostPortInfo {
    /// The ports of `pods`.
    pub(crate) fn of<'a>(pods: impl IntoIterator<Item = &'a PodSpec>) -> Self {
        let mut info = HostPortInfo::default();
        for p in pods {
            info.add(&wanted(p));
        }
        info
    }

    /// A pod holding `ports` came (`HostPortInfo.Add`).
    pub(crate) fn add(&mut self, ports: &[HostPort]) {
        self.held.extend(ports.iter().cloned());
    }

    /// A pod holding `ports` went (`HostPortInfo.Remove`: the port leaves the set even
    /// when another pod holds it too).
    pub(crate) fn remove(&mut self, ports: &[HostPort]) {
        for p in ports {
            self.held.remove(p);
        }
    }

    /// Whether every port here is held in `other` too.
    #[cfg(any(test, debug_assertions))]
    pub(crate) fn is_subset(&self, other: &HostPortInfo) -> bool {
        self.held.is_subset(&other.held)
    }

    /// Whether `want` conflicts with a port held here (`CheckConflict`), leaving out what
    /// `own` holds (the pod being checked, when it is counted here already: as if it were
    /// removed first).
    fn conflicts(&self, want: &HostPort, own: &[HostPort]) -> bool {
        self.held.iter().any(|p| {
            p.protocol == want.protocol
                && p.port == want.port
                && (want.ip == ANY_IP || p.ip == ANY_IP || p.ip == want.ip)
                && !own.contains(p)
        })
    }

    /// Whether every port in `want` is free here (`fitsPorts`), `own` left out as in
    /// [`Self::conflicts`].
    pub(crate) fn fits(&self, want: &[HostPort], own: &[HostPort]) -> bool {
        want.iter().all(|p| !self.conflicts(p, own))
    }
}

/// The NodePorts filter's reason (`ErrReason`).
pub(crate) const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

#[cfg(test)]
mod tests {
    use super::*;

    fn port(ip: &str, protocol: &str, port: u16) -> HostPort {
        HostPort::new(ip, protocol, port).expect("a host port")
    }

    #[test]
    fn conflicts_follow_host_port_info() {
        let mut used = HostPortInfo::default();
        used.add(&[port("127.0.0.1", "TCP", 8080), port("", "UDP", 53)]);
        // The same IP, protocol and port.
        assert!(!used.fits(&[port("127.0.0.1", "TCP", 8080)], &[]));
        // 0.0.0.0 takes every IP, either way round.
        assert!(!used.fits(&[port("", "TCP", 8080)], &[]));
        assert!(!used.fits(&[port("10.0.0.1", "UDP", 53)], &[]));
        // Another IP, protocol or port is free.
        assert!(used.fits(&[port("127.0.0.2", "TCP", 8080)], &[]));
        assert!(used.fits(&[port("", "UDP", 8080), port("", "TCP", 53)], &[]));
        // An empty protocol is TCP; hostPort 0 holds nothing.
        assert_eq!(port("", "", 1), port(ANY_IP, "TCP", 1));
        assert!(HostPort::new("", "TCP", 0).is_none());
    }

    #[test]
    fn a_port_two_pods_hold_is_freed_when_either_goes() {
        let p = [port("", "TCP", 80)];
        let mut used = HostPortInfo::default();
        used.add(&p);
        used.add(&p);
        assert!(!used.fits(&p, &[]));
        // The pod's own hold is not a conflict.
        assert!(used.fits(&p, &p));
        // `HostPortInfo.Remove` deletes the port whoever else holds it.
        used.remove(&p);
        assert!(used.fits(&p, &[]));
        assert_eq!(used, HostPortInfo::default());
    }
}
