//! kubelet's reading of the bandwidth annotations (`kubernetes.io/ingress-bandwidth`,
//! `kubernetes.io/egress-bandwidth`) into the `bandwidth` capability containerd passes to
//! the plugin (`pkg/util/bandwidth` `ExtractPodBandwidthResources`: a resource quantity,
//! at least 1k and at most 1P bits per second).

/// A Kubernetes quantity of bits per second for the bandwidth annotations (`10M`, `1Gi`,
/// `500k`), checked like kubelet: at least 1k, at most 1P.
pub fn parse(text: &str) -> Result<u64, String> {
    let err = || {
        format!(
            "invalid bandwidth {text:?}: expected a quantity like 10M, 500k or 1Gi (bits per second)"
        )
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (num, suffix) = text.split_at(split);
    let value: f64 = num.parse().map_err(|_| err())?;
    let mult: f64 = match suffix {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        _ => return Err(err()),
    };
    let bits = value * mult;
    if bits < 1e3 {
        return Err(format!("resource is unreasonably small (< 1kbit): {text}"));
    }
    if bits > 1e15 {
        return Err(format!("resource is unreasonably large (> 1Pbit): {text}"));
    }
    Ok(bits.round() as u64)
}
