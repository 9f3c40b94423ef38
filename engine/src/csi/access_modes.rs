//! Kubernetes PersistentVolume access modes → the CSI access mode sidecars and kubelet send.
//!
//! A copy of `kubernetes-csi/csi-lib-utils:accessmodes/access_modes.go` (`ToCSIAccessMode`),
//! rows evaluated top-down (reference E.4), with its exact error strings.

use super::types::AccessModeType;
use std::fmt;

/// A PersistentVolume access mode (`spec.accessModes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum K8sAccessMode {
    /// RWO: read-write by one node.
    ReadWriteOnce,
    /// ROX: read-only by many nodes.
    ReadOnlyMany,
    /// RWX: read-write by many nodes.
    ReadWriteMany,
    /// RWOP: read-write by one pod.
    ReadWriteOncePod,
}

impl K8sAccessMode {
    /// The API name (`ReadWriteOnce`).
    pub(crate) fn api_name(self) -> &'static str {
        match self {
            K8sAccessMode::ReadWriteOnce => "ReadWriteOnce",
            K8sAccessMode::ReadOnlyMany => "ReadOnlyMany",
            K8sAccessMode::ReadWriteMany => "ReadWriteMany",
            K8sAccessMode::ReadWriteOncePod => "ReadWriteOncePod",
        }
    }

    /// The short name kubectl prints (`RWO`).
    pub(crate) fn short_name(self) -> &'static str {
        match self {
            K8sAccessMode::ReadWriteOnce => "RWO",
            K8sAccessMode::ReadOnlyMany => "ROX",
            K8sAccessMode::ReadWriteMany => "RWX",
            K8sAccessMode::ReadWriteOncePod => "RWOP",
        }
    }

    /// Parses an API name or a short name (case-sensitive, as the API is).
    pub fn parse(s: &str) -> Option<Self> {
        [
            K8sAccessMode::ReadWriteOnce,
            K8sAccessMode::ReadOnlyMany,
            K8sAccessMode::ReadWriteMany,
            K8sAccessMode::ReadWriteOncePod,
        ]
        .into_iter()
        .find(|m| m.api_name() == s || m.short_name() == s)
    }
}

impl fmt::Display for K8sAccessMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.api_name())
    }
}

/// Maps a PV's access modes to one CSI mode. `supports_single_node_multi_writer` is whether
/// the driver advertises the SINGLE_NODE_MULTI_WRITER controller capability.
pub fn to_csi_access_mode(
    pv_modes: &[K8sAccessMode],
    supports_single_node_multi_writer: bool,
) -> Result<AccessModeType, String> {
    let has = |m: K8sAccessMode| pv_modes.contains(&m);
    let mut unique = pv_modes.to_vec();
    unique.sort();
    unique.dedup();

    if has(K8sAccessMode::ReadWriteOncePod) {
        if unique.len() > 1 {
            return Err("Kubernetes does not support use of ReadWriteOncePod with other access modes on the same PersistentVolume".to_string());
        }
        return Ok(if supports_single_node_multi_writer {
            AccessModeType::SingleNodeSingleWriter
        } else {
            AccessModeType::SingleNodeWriter
        });
    }
    if has(K8sAccessMode::ReadWriteMany) {
        return Ok(AccessModeType::MultiNodeMultiWriter);
    }
    if has(K8sAccessMode::ReadOnlyMany) && has(K8sAccessMode::ReadWriteOnce) {
        return Err(
            "CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume"
                .to_string(),
        );
    }
    if has(K8sAccessMode::ReadOnlyMany) {
        return Ok(AccessModeType::MultiNodeReaderOnly);
    }
    if has(K8sAccessMode::ReadWriteOnce) {
        return Ok(if supports_single_node_multi_writer {
            AccessModeType::SingleNodeMultiWriter
        } else {
            AccessModeType::SingleNodeWriter
        });
    }
    // Go prints the slice with %+v: `[]` for an empty list.
    let listed: Vec<&str> = pv_modes.iter().map(|m| m.api_name()).collect();
    Err(format!(
        "unsupported AccessMode combination: [{}]",
        listed.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::K8sAccessMode::*;
    use super::*;
    use AccessModeType as M;

    const RWOP_ERR: &str = "Kubernetes does not support use of ReadWriteOncePod with other access modes on the same PersistentVolume";
    const ROX_RWO_ERR: &str =
        "CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume";

    #[test]
    fn access_mode_mapping_table() {
        // (PV modes, without SINGLE_NODE_MULTI_WRITER, with it) — reference E.4.
        type Row = (
            &'static [K8sAccessMode],
            Result<M, &'static str>,
            Result<M, &'static str>,
        );
        let table: &[Row] = &[
            (
                &[ReadWriteOncePod],
                Ok(M::SingleNodeWriter),
                Ok(M::SingleNodeSingleWriter),
            ),
            (
                &[ReadWriteOncePod, ReadWriteOnce],
                Err(RWOP_ERR),
                Err(RWOP_ERR),
            ),
            (
                &[ReadWriteMany, ReadWriteOncePod],
                Err(RWOP_ERR),
                Err(RWOP_ERR),
            ),
            (
                &[ReadWriteOncePod, ReadWriteOncePod],
                Ok(M::SingleNodeWriter),
                Ok(M::SingleNodeSingleWriter),
            ),
            (
                &[ReadWriteMany],
                Ok(M::MultiNodeMultiWriter),
                Ok(M::MultiNodeMultiWriter),
            ),
            (
                &[ReadWriteOnce, ReadOnlyMany, ReadWriteMany],
                Ok(M::MultiNodeMultiWriter),
                Ok(M::MultiNodeMultiWriter),
            ),
            (
                &[ReadOnlyMany, ReadWriteOnce],
                Err(ROX_RWO_ERR),
                Err(ROX_RWO_ERR),
            ),
            (
                &[ReadOnlyMany],
                Ok(M::MultiNodeReaderOnly),
                Ok(M::MultiNodeReaderOnly),
            ),
            (
                &[ReadWriteOnce],
                Ok(M::SingleNodeWriter),
                Ok(M::SingleNodeMultiWriter),
            ),
            (
                &[],
                Err("unsupported AccessMode combination: []"),
                Err("unsupported AccessMode combination: []"),
            ),
        ];
        for (modes, without, with) in table {
            assert_eq!(
                to_csi_access_mode(modes, false),
                without.map_err(str::to_string),
                "{modes:?} without SINGLE_NODE_MULTI_WRITER"
            );
            assert_eq!(
                to_csi_access_mode(modes, true),
                with.map_err(str::to_string),
                "{modes:?} with SINGLE_NODE_MULTI_WRITER"
            );
        }
    }

    #[test]
    fn names_parse() {
        assert_eq!(K8sAccessMode::parse("RWX"), Some(ReadWriteMany));
        assert_eq!(
            K8sAccessMode::parse("ReadWriteOncePod"),
            Some(ReadWriteOncePod)
        );
        assert_eq!(K8sAccessMode::parse("rwo"), None);
    }
}
