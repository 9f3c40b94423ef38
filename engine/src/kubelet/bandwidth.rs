//! containerd's reading of the bandwidth annotations (`kubernetes.io/ingress-bandwidth`,
//! `kubernetes.io/egress-bandwidth`) into the `bandwidth` capability it passes to the
//! plugin (`toCNIBandWidth`, `ExtractPodBandwidthResources`: a resource quantity whose
//! `Value()`, rounded up, is at least 1k and at most 1P bits per second). The API server
//! stores any text there; a bad one fails the pod's RunPodSandbox.

/// A Kubernetes quantity of bits per second for the bandwidth annotations (`10M`, `1Gi`,
/// `500k`), checked as `ExtractPodBandwidthResources` checks it, with its errors.
pub fn parse(text: &str) -> Result<u64, String> {
    let q = crate::util::quantity::Quantity::parse(text).ok_or_else(|| {
        // resource.ParseQuantity's ErrFormatWrong.
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'".to_string()
    })?;
    let small = || "resource is unreasonably small (< 1kbit)".to_string();
    let large = || "resource is unreasonably large (> 1Pbit)".to_string();
    if q.negative {
        return Err(small());
    }
    // `Value()` rounds a fraction up: 999.5 is 1000, enough.
    let bits = q.ceil().map_err(|_| large())?;
    if bits < 1_000 {
        return Err(small());
    }
    if bits > 1_000_000_000_000_000 {
        return Err(large());
    }
    Ok(bits as u64)
}
