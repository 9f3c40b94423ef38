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
    /// How it was written, which decides how the API server writes it back.
    pub format: Format,
}

/// A quantity's format (`resource.Format`): the kind of suffix it was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `Ki` … `Ei`.
    BinarySI,
    /// No suffix, or `n` … `E`.
    DecimalSI,
    /// `e`/`E` and an exponent.
    DecimalExponent,
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
        let format = match suffix.as_bytes() {
            [_, b'i'] => Format::BinarySI,
            [b'e' | b'E', _, ..] => Format::DecimalExponent,
            _ => Format::DecimalSI,
        };
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
            format,
        })
    }

    /// The quantity as the API server writes it back (`Quantity.String()`, apimachinery's
    /// `CanonicalizeBytes`): a binary suffix when the value is a whole number of at least
    /// 1024 written with one (`1.5Gi` is `1536Mi`); otherwise the largest decimal suffix
    /// (or, written with an exponent, the exponent) that keeps the number whole (`5000M` is
    /// `5G`, `1500` stays `1500`, `0.5` is `500m`, `1e3` stays `1e3`). Below a nano the
    /// value is rounded up to one, as `ParseQuantity` does. `None` when the number is too
    /// large to write (over a u128 of digits).
    pub(crate) fn canonical(&self) -> Option<String> {
        if self.digits == 0 {
            return Some("0".into());
        }
        let sign = if self.negative { "-" } else { "" };
        let mut format = self.format;
        if format == Format::BinarySI {
            let whole = match self.fraction() {
                Ok((num, Some(den))) if num % den == 0 => Some(num / den),
                _ => None,
            };
            match whole {
                Some(n) if n >= 1024 => {
                    let (mut n, mut exp) = (n, 0usize);
                    while n % 1024 == 0 && exp < 6 {
                        n /= 1024;
                        exp += 1;
                    }
                    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
                    return Some(format!("{sign}{n}{suffix}"));
                }
                // Under 1024, or not whole: written as a decimal, not to lose precision.
                _ => format = Format::DecimalSI,
            }
        }
        // The digits at a power of ten, trailing zeros in the exponent, then the exponent
        // brought down to a multiple of three.
        let mut digits = self.digits;
        let mut exp10 = self.exp10;
        if self.exp2 > 0 {
            digits = digits.checked_mul(1u128.checked_shl(self.exp2)?)?;
        }
        while digits % 10 == 0 {
            digits /= 10;
            exp10 += 1;
        }
        if exp10 < -9 {
            // Finer than a nano: rounded up to the next nano.
            let drop = (-9 - exp10) as u32;
            digits = if drop > MAX_POW10 as u32 {
                1
            } else {
                let p = 10u128.pow(drop);
                digits / p + u128::from(digits % p != 0)
            };
            exp10 = -9;
            while digits % 10 == 0 {
                digits /= 10;
                exp10 += 1;
            }
        }
        match exp10.rem_euclid(3) {
            1 => {
                digits = digits.checked_mul(10)?;
                exp10 -= 1;
            }
            2 => {
                digits = digits.checked_mul(100)?;
                exp10 -= 2;
            }
            _ => {}
        }
        let suffix = match format {
            Format::DecimalExponent if exp10 == 0 => String::new(),
            Format::DecimalExponent => format!("e{exp10}"),
            _ => match exp10 {
                -9 => "n".into(),
                -6 => "u".into(),
                -3 => "m".into(),
                0 => String::new(),
                3 => "k".into(),
                6 => "M".into(),
                9 => "G".into(),
                12 => "T".into(),
                15 => "P".into(),
                18 => "E".into(),
                e => format!("e{e}"),
            },
        };
        Some(format!("{sign}{digits}{suffix}"))
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

    /// Compare two quantities by value, as `Quantity.Cmp` does (`500m` < `1`, `1Gi` >
    /// `1G`, `-1` < `0`): exactly when both fit a u128 fraction, else by their
    /// approximate values (only past 10^38, where nothing real lies).
    pub(crate) fn cmp_value(&self, other: &Quantity) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let magnitude = match (self.negative, other.negative) {
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            _ => {
                let exact = match (self.fraction(), other.fraction()) {
                    (Ok((n1, Some(d1))), Ok((n2, Some(d2)))) => {
                        match (n1.checked_mul(d2), n2.checked_mul(d1)) {
                            (Some(a), Some(b)) => Some(a.cmp(&b)),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                exact.unwrap_or_else(|| self.approx().total_cmp(&other.approx()))
            }
        };
        if self.negative {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// The magnitude as a float (for comparisons beyond a u128).
    fn approx(&self) -> f64 {
        let exp10 = self.exp10.clamp(-400, 400) as i32;
        self.digits as f64 * 10f64.powi(exp10) * 2f64.powi(self.exp2 as i32)
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

/// A quantity as the API server keeps it (see [`Quantity::canonical`]); text that is not a
/// quantity is returned as written (the callers have already refused it).
pub(crate) fn canonical_text(text: &str) -> String {
    Quantity::parse(text)
        .and_then(|q| q.canonical())
        .unwrap_or_else(|| text.to_string())
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
    #[test]
    fn quantities_compare_by_value() {
        use std::cmp::Ordering::*;
        let q = |t: &str| Quantity::parse(t).unwrap();
        for (a, b, want) in [
            ("500m", "1", Less),
            ("1", "1000m", Equal),
            ("1Gi", "1G", Greater),
            ("1024Mi", "1Gi", Equal),
            ("-1", "0", Less),
            ("-2", "-1", Less),
            ("0.5", "500m", Equal),
            ("1e3", "1k", Equal),
            ("2", "1", Greater),
            ("1e40", "1e39", Greater),
        ] {
            assert_eq!(q(a).cmp_value(&q(b)), want, "{a} vs {b}");
            assert_eq!(q(b).cmp_value(&q(a)), want.reverse(), "{b} vs {a}");
        }
    }

    use super::*;

    #[test]
    fn canonical_is_the_api_server_s() {
        let c = |t: &str| Quantity::parse(t).unwrap().canonical().unwrap();
        for (written, canonical) in [
            ("5G", "5G"),
            ("5000M", "5G"),
            ("5000000000", "5G"),
            ("1500", "1500"),
            ("1.5k", "1500"),
            ("1.5Gi", "1536Mi"),
            ("1024Mi", "1Gi"),
            ("1Gi", "1Gi"),
            ("512Ki", "512Ki"),
            ("0.5Ki", "512"),
            ("1023", "1023"),
            ("0.5", "500m"),
            ("500m", "500m"),
            ("1e3", "1e3"),
            ("2E3", "2e3"),
            ("1.5e3", "1500"),
            ("1e-12", "1e-9"),
            ("0.000000000001", "1n"),
            ("0", "0"),
            ("0Gi", "0"),
            ("-5G", "-5G"),
            ("10G", "10G"),
            ("100M", "100M"),
        ] {
            assert_eq!(c(written), canonical, "{written}");
        }
    }

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
