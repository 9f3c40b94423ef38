//! Kubernetes resource quantities for storage sizes: `10Gi`, `500Mi`, `1G`, `1073741824`,
//! and the other forms the API server accepts (k8s.io/apimachinery `resource.Quantity`):
//! decimal fractions with either kind of suffix (`1.5Gi`), exponents (`1e3`, `1E3`) and
//! the small decimal suffixes (`500m`, `1u`, `1n`).

/// A quantity parsed exactly: `digits × 10^exp10 × 2^exp2`, with its sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quantity {
    /// True for a leading `-` (and a non-zero value).
    pub negative: bool,
    /// The significant digits as an integer.
    pub digits: u128,
    /// Power of ten (from the fraction, a decimal suffix or an exponent).
    pub exp10: i64,
    /// Power of two (from a binary suffix).
    pub exp2: u32,
}

/// The largest power of ten a `u128` holds.
const MAX_POW10: i64 = 38;

/// Why a quantity's value could not be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// Larger than the target type.
    TooLarge,
}

impl Quantity {
    /// Parse the quantity grammar of `resource.ParseQuantity`:
    /// `[+-]DIGITS[.DIGITS]SUFFIX` where SUFFIX is a binary one (Ki Mi Gi Ti Pi Ei), a
    /// decimal one (n u m "" k M G T P E) or an exponent (`e`/`E` and a signed integer).
    pub fn parse(text: &str) -> Option<Quantity> {
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let num_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (num, suffix) = rest.split_at(num_end);
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
            return None;
        }
        let (exp10, exp2): (i64, u32) = match suffix {
            "" => (0, 0),
            "n" => (-9, 0),
            "u" => (-6, 0),
            "m" => (-3, 0),
            "k" => (3, 0),
            "M" => (6, 0),
            "G" => (9, 0),
            "T" => (12, 0),
            "P" => (15, 0),
            "E" => (18, 0),
            "Ki" => (0, 10),
            "Mi" => (0, 20),
            "Gi" => (0, 30),
            "Ti" => (0, 40),
            "Pi" => (0, 50),
            "Ei" => (0, 60),
            s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
                let e = &s[1..];
                let body = e.strip_prefix(['+', '-']).unwrap_or(e);
                if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                // A huge exponent saturates: the value is then far out of any range.
                let n = e.parse::<i64>().unwrap_or(if e.starts_with('-') {
                    i64::MIN
                } else {
                    i64::MAX
                });
                (n.clamp(-(1 << 40), 1 << 40), 0)
            }
            _ => return None,
        };
        // Significant digits: leading zeros dropped, trailing zeros moved into the exponent.
        let all = format!("{int}{frac}");
        let all = all.trim_start_matches('0');
        let trimmed = all.trim_end_matches('0');
        let mut exp10 = exp10 - frac.len() as i64 + (all.len() - trimmed.len()) as i64;
        let digits: u128 = if trimmed.is_empty() {
            exp10 = 0;
            0
        } else if trimmed.len() as i64 > MAX_POW10 {
            // More significant digits than a u128 holds: keep the first 38 and round up
            // (a size is rounded up anyway; nothing real needs 38 digits of precision).
            exp10 += trimmed.len() as i64 - MAX_POW10;
            trimmed[..MAX_POW10 as usize].parse::<u128>().ok()? + 1
        } else {
            trimmed.parse().ok()?
        };
        Some(Quantity {
            negative: negative && digits != 0,
            digits,
            exp10,
            exp2,
        })
    }

    /// The magnitude as a fraction `num / den` (den a power of ten), or `TooLarge` when
    /// the numerator does not fit a u128. `den` is `None` when it would not fit either:
    /// the magnitude is then below 1 (and above 0 when num > 0).
    fn fraction(&self) -> Result<(u128, Option<u128>), Overflow> {
        let mut num = self
            .digits
            .checked_mul(1u128.checked_shl(self.exp2).ok_or(Overflow::TooLarge)?)
            .ok_or(Overflow::TooLarge)?;
        if num == 0 {
            return Ok((0, Some(1)));
        }
        if self.exp10 >= 0 {
            if self.exp10 > MAX_POW10 {
                return Err(Overflow::TooLarge);
            }
            num = num
                .checked_mul(10u128.pow(self.exp10 as u32))
                .ok_or(Overflow::TooLarge)?;
            Ok((num, Some(1)))
        } else if -self.exp10 > MAX_POW10 {
            Ok((num, None))
        } else {
            Ok((num, Some(10u128.pow((-self.exp10) as u32))))
        }
    }

    /// The magnitude rounded up to a whole number, as `Quantity.Value()` rounds.
    pub(crate) fn ceil(&self) -> Result<u128, Overflow> {
        match self.fraction()? {
            (0, _) => Ok(0),
            (_, None) => Ok(1),
            (num, Some(den)) => Ok(num / den + u128::from(num % den != 0)),
        }
    }

    /// The magnitude rounded to the nearest whole number (halves up).
    pub fn round(&self) -> Result<u128, Overflow> {
        match self.fraction()? {
            (_, None) => Ok(0),
            (num, Some(den)) => Ok(num / den + u128::from(num % den >= den.div_ceil(2))),
        }
    }

    /// Compare the magnitude with a whole number.
    pub(crate) fn cmp_whole(&self, n: u128) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        match self.fraction() {
            Err(_) => Ordering::Greater,
            // Strictly between 0 and 1.
            Ok((_, None)) => {
                if n == 0 {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            Ok((num, Some(den))) => match n.checked_mul(den) {
                Some(m) => num.cmp(&m),
                None => Ordering::Less,
            },
        }
    }
}

/// The message for a size over the largest the lab holds (an i64 of bytes, as the CSI
/// `capacity_range` and the API server's `Value()` use).
fn too_large(text: &str) -> String {
    format!(
        "invalid size {text:?}: too large; the largest is {} bytes (just under 8Ei)",
        i64::MAX
    )
}

/// Parse a storage quantity into bytes (a fraction of a byte rounds up, as the API
/// server's `Value()` does: `500m` is 1 byte, `1.5Gi` is 1610612736).
pub(crate) fn parse_bytes(text: &str) -> Result<i64, String> {
    let q = Quantity::parse(text).ok_or_else(|| {
        format!(
            "invalid size {text:?}: expected a quantity like 10Gi, 500Mi, 1G, 1.5Gi, 1e9 or a number of bytes"
        )
    })?;
    if q.negative {
        return Err(format!("invalid size {text:?}: must be ≥ 0"));
    }
    let bytes = q.ceil().map_err(|_| too_large(text))?;
    i64::try_from(bytes).map_err(|_| too_large(text))
}

/// Bytes as the canonical quantity Kubernetes prints (binary suffixes when exact).
pub(crate) fn format_bytes(bytes: i64) -> String {
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

    #[test]
    fn kubernetes_quantity_forms() {
        assert_eq!(parse_bytes("1.5Gi").unwrap(), 1536 << 20);
        assert_eq!(format_bytes(parse_bytes("1.5Gi").unwrap()), "1536Mi");
        assert_eq!(parse_bytes("1e3").unwrap(), 1000);
        assert_eq!(parse_bytes("1E3").unwrap(), 1000);
        assert_eq!(parse_bytes("1.5e3").unwrap(), 1500);
        assert_eq!(
            parse_bytes("2e-1").unwrap(),
            1,
            "a fraction of a byte rounds up"
        );
        assert_eq!(parse_bytes("500m").unwrap(), 1);
        assert_eq!(parse_bytes("1500m").unwrap(), 2);
        assert_eq!(parse_bytes("0.5").unwrap(), 1);
        assert_eq!(parse_bytes(".5Ki").unwrap(), 512);
        assert_eq!(parse_bytes("1.").unwrap(), 1);
        assert_eq!(parse_bytes("+1Ki").unwrap(), 1024);
        assert_eq!(parse_bytes("1E").unwrap(), 1_000_000_000_000_000_000);
        assert_eq!(parse_bytes("7Ei").unwrap(), 7 << 60);
        assert_eq!(parse_bytes("1P").unwrap(), 1_000_000_000_000_000);
        assert_eq!(parse_bytes("0").unwrap(), 0);
        assert_eq!(parse_bytes("0.0Gi").unwrap(), 0);
        assert_eq!(parse_bytes("1e-999999999999").unwrap(), 1);
        for bad in [
            "", ".", "1..5", "1.2.3", "e3", "1e", "1e+", "1ee3", "1Gib", "1 Gi", "--1", "1.5.Gi",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn negative_and_too_large_sizes_say_so() {
        assert_eq!(
            parse_bytes("-1Gi").unwrap_err(),
            "invalid size \"-1Gi\": must be ≥ 0"
        );
        assert_eq!(parse_bytes("-0").unwrap(), 0);
        let e = parse_bytes("8Ei").unwrap_err();
        assert!(
            e.contains("the largest is 9223372036854775807 bytes"),
            "{e}"
        );
        for big in [
            "9999999Pi",
            "1e19",
            "1e400",
            "99999999999999999999999999999999999999999999",
        ] {
            assert!(
                parse_bytes(big).unwrap_err().contains("the largest is"),
                "{big}"
            );
        }
        assert_eq!(parse_bytes("9223372036854775807").unwrap(), i64::MAX);
    }

    #[test]
    fn rounding_and_comparing() {
        let q = Quantity::parse("1.2345Ki").unwrap();
        assert_eq!(q.round().unwrap(), 1264);
        assert_eq!(q.ceil().unwrap(), 1265);
        assert_eq!(
            Quantity::parse("999.6").unwrap().cmp_whole(1000),
            std::cmp::Ordering::Less
        );
        assert_eq!(
            Quantity::parse("1k").unwrap().cmp_whole(1000),
            std::cmp::Ordering::Equal
        );
        assert_eq!(
            Quantity::parse("1e-50").unwrap().cmp_whole(0),
            std::cmp::Ordering::Greater
        );
        assert_eq!(
            Quantity::parse("1e99").unwrap().cmp_whole(1),
            std::cmp::Ordering::Greater
        );
    }
}
