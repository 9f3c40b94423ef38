//! kubelet's reading of the bandwidth annotations (`kubernetes.io/ingress-bandwidth`,
//! `kubernetes.io/egress-bandwidth`) into the `bandwidth` capability containerd passes to
//! the plugin (`pkg/util/bandwidth` `ExtractPodBandwidthResources`: a resource quantity,
//! at least 1k and at most 1P bits per second).

/// A Kubernetes quantity of bits per second for the bandwidth annotations (`10M`, `1Gi`,
/// `500k`), checked like kubelet: at least 1k, at most 1P.
pub fn parse(text: &str) -> Result<u64, String> {
    use std::cmp::Ordering;
    let q = crate::util::quantity::Quantity::parse(text).ok_or_else(|| {
        format!(
            "invalid bandwidth {text:?}: expected a quantity like 10M, 500k, 1Gi or 1e6 (bits per second)"
        )
    })?;
    if q.negative || q.cmp_whole(1_000) == Ordering::Less {
        return Err(format!("resource is unreasonably small (< 1kbit): {text}"));
    }
    if q.cmp_whole(1_000_000_000_000_000) == Ordering::Greater {
        return Err(format!("resource is unreasonably large (> 1Pbit): {text}"));
    }
    let bits = q
        .round()
        .map_err(|_| format!("resource is unreasonably large (> 1Pbit): {text}"))?;
    Ok(bits as u64)
}
