//! Kubernetes resource quantities for storage sizes: `10Gi`, `500Mi`, `1G`, `1073741824`.

/// Parse a storage quantity into bytes.
pub fn parse_bytes(text: &str) -> Result<i64, String> {
    let err = || {
        format!(
            "invalid size {text:?}: expected a quantity like 10Gi, 500Mi, 1G or a number of bytes"
        )
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (num, suffix) = text.split_at(split);
    let n: i64 = num.parse().map_err(|_| err())?;
    let mult: i64 = match suffix {
        "" => 1,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "Pi" => 1 << 50,
        _ => return Err(err()),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {text:?} is too large"))
}

/// Bytes as the canonical quantity Kubernetes prints (binary suffixes when exact).
pub fn format_bytes(bytes: i64) -> String {
    const UNITS: [(&str, i64); 5] = [
        ("Pi", 1 << 50),
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
    ];
    if bytes == 0 {
        return "0".into();
    }
    for (suffix, size) in UNITS {
        if bytes % size == 0 {
            return format!("{}{suffix}", bytes / size);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(parse_bytes("10Gi").unwrap(), 10 << 30);
        assert_eq!(parse_bytes("1G").unwrap(), 1_000_000_000);
        assert_eq!(format_bytes(10 << 30), "10Gi");
        assert_eq!(format_bytes(1536 << 20), "1536Mi");
        assert_eq!(format_bytes(1000), "1000");
        assert!(parse_bytes("ten").is_err());
        assert!(parse_bytes("10GB").is_err());
    }
}
