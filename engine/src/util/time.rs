//! The lab's logical time: a point on the clock or a span of it, in milliseconds.
//!
//! The clock starts at 0 when the lab starts and moves only on `tick`. Real components keep
//! times finer than a second (kubelet's volume operations back off from 500 ms), so the
//! clock counts milliseconds; everything that prints a time prints it as the component
//! would: the lab's `t=3s` / `t=2.5s`, Go's `time.Duration` (`500ms`, `2m2s`), Go's
//! `time.Time` (`2025-01-01 00:00:00.5 +0000 UTC`), or RFC 3339 whole seconds in API objects
//! (`crate::cluster::meta::timestamp`, which truncates as `metav1.Time` does).
//!
//! `Millis` has no `Display` on purpose: every place that prints one says which of those
//! forms it wants.

/// A time on the lab's logical clock (milliseconds since it started), or a span of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(u64);

impl Millis {
    /// Time 0, or no time at all.
    pub const ZERO: Millis = Millis(0);

    /// `n` milliseconds.
    pub const fn ms(n: u64) -> Millis {
        Millis(n)
    }

    /// `n` whole seconds (saturating).
    pub const fn secs(n: u64) -> Millis {
        Millis(n.saturating_mul(1000))
    }

    /// The value in milliseconds.
    pub const fn as_ms(self) -> u64 {
        self.0
    }

    /// The whole seconds in it (truncated, as `metav1.Time` keeps seconds).
    pub const fn whole_secs(self) -> u64 {
        self.0 / 1000
    }

    /// Whether it is a whole number of seconds.
    pub const fn is_whole_secs(self) -> bool {
        self.0 % 1000 == 0
    }

    /// `self + other`, saturating.
    #[must_use]
    pub const fn saturating_add(self, other: Millis) -> Millis {
        Millis(self.0.saturating_add(other.0))
    }

    /// `self - other`, 0 below.
    #[must_use]
    pub const fn saturating_sub(self, other: Millis) -> Millis {
        Millis(self.0.saturating_sub(other.0))
    }

    /// `self * n`, saturating.
    #[must_use]
    pub const fn saturating_mul(self, n: u64) -> Millis {
        Millis(self.0.saturating_mul(n))
    }

    /// Seconds as the lab prints them after `t=` or in a `tick` hint: `3s`, `2.5s`,
    /// `0.125s` (whole seconds print exactly as before sub-second steps existed).
    pub fn secs_text(self) -> String {
        format!("{}s", self.secs_number())
    }

    /// The seconds alone: `3`, `2.5`, `0.125`.
    pub(crate) fn secs_number(self) -> String {
        let (s, ms) = (self.0 / 1000, self.0 % 1000);
        if ms == 0 {
            s.to_string()
        } else {
            let frac = format!("{ms:03}");
            format!("{s}.{}", frac.trim_end_matches('0'))
        }
    }

    /// The span as the shortest `tick` argument that advances the clock by it: `10` for
    /// whole seconds (the form every lesson and transcript used), else `500ms` / `1500ms`.
    pub(crate) fn tick_arg(self) -> String {
        if self.is_whole_secs() {
            self.whole_secs().to_string()
        } else {
            format!("{}ms", self.0)
        }
    }

    /// Go's `time.Duration.String()` of the span: `0s`, `500ms`, `1s`, `1.5s`, `2m2s`,
    /// `1h0m0s` (kubelet prints `durationBeforeRetry` this way).
    pub(crate) fn go_duration(self) -> String {
        let ms = self.0;
        if ms == 0 {
            return "0s".into();
        }
        if ms < 1000 {
            return format!("{ms}ms");
        }
        let (h, rem) = (ms / 3_600_000, ms % 3_600_000);
        let (m, rem) = (rem / 60_000, rem % 60_000);
        let secs = Millis(rem).secs_number();
        if h > 0 {
            format!("{h}h{m}m{secs}s")
        } else if m > 0 {
            format!("{m}m{secs}s")
        } else {
            format!("{secs}s")
        }
    }
}

/// JSON (`-o json`, the save file's state): seconds, an integer when whole (as every
/// time was before the clock had sub-second steps), else a fraction (`2.5`).
impl serde::Serialize for Millis {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_whole_secs() {
            s.serialize_u64(self.whole_secs())
        } else {
            s.serialize_f64(self.0 as f64 / 1000.0)
        }
    }
}

/// The latest the logical clock may read: 10 years of logical seconds (315,360,000; the
/// engine's `MAX_CLOCK`, see there why). No `tick` can be longer, so [`parse_tick`]
/// refuses a longer DURATION with this limit, and the engine's clock check names the
/// largest tick left from the current time.
pub const MAX_CLOCK: Millis = Millis::secs(315_360_000);

/// Why a `tick` argument was refused.
pub(crate) const TICK_FORMS: &str =
    "a whole number of seconds (10), or a duration with a unit: 500ms, 2s, 1.5s, 1m, 1m30s, 1h";

/// Parses a `tick` argument: a bare whole number is seconds (`tick 10`, as always); a
/// duration is one or more `NUMBER UNIT` parts (`ms`, `s`, `m`, `h`, Go's
/// `time.ParseDuration` units the lab can step), each NUMBER possibly with a fraction,
/// summed to a whole number of milliseconds. Negative, finer than a millisecond, or longer
/// than the clock can ever go ([`MAX_CLOCK`]) is refused with what is accepted.
pub fn parse_tick(text: &str) -> Result<Millis, String> {
    let t = parse_span(text)?;
    if t > MAX_CLOCK {
        return Err(too_large());
    }
    Ok(t)
}

/// The refusal of a DURATION past [`MAX_CLOCK`].
fn too_large() -> String {
    format!(
        "too large; the clock stops at t={} (10 years of logical seconds), so the largest tick is {} (seconds)",
        MAX_CLOCK.secs_text(),
        MAX_CLOCK.whole_secs()
    )
}

/// [`parse_tick`] without the clock's limit (past `u64::MAX` ms is refused).
fn parse_span(text: &str) -> Result<Millis, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("empty; expected {TICK_FORMS}"));
    }
    if t.starts_with('-') {
        return Err("must be ≥ 0".into());
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<u64>()
            .ok()
            .and_then(|s| s.checked_mul(1000))
            .map(Millis)
            .ok_or_else(too_large);
    }
    let bad = || format!("not a duration; expected {TICK_FORMS}");
    let mut rest = t;
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{rest:?} has no unit; expected {TICK_FORMS}"))?;
        if num_len == 0 {
            return Err(bad());
        }
        let number = &rest[..num_len];
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let per_unit: u64 = match unit {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            "us" | "µs" | "ns" => {
                return Err(format!(
                    "{unit:?} is finer than the clock steps (1ms); expected {TICK_FORMS}"
                ));
            }
            _ => {
                return Err(format!("unknown unit {unit:?}; expected {TICK_FORMS}"));
            }
        };
        let part = scaled(number, per_unit).ok_or_else(|| {
            if number.matches('.').count() > 1 || number == "." {
                bad()
            } else {
                format!(
                    "{number}{unit} is not a whole number of milliseconds, or too large (the largest tick is {} seconds); expected {TICK_FORMS}",
                    MAX_CLOCK.whole_secs()
                )
            }
        })?;
        total = total.checked_add(part).ok_or_else(too_large)?;
    }
    Ok(Millis(total))
}

/// `number × per_unit` milliseconds when it is a whole number of them.
fn scaled(number: &str, per_unit: u64) -> Option<u64> {
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let int_val: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut total = int_val.checked_mul(per_unit)?;
    if !frac.is_empty() {
        // frac / 10^len × per_unit must be whole.
        let digits = frac.trim_end_matches('0');
        if digits.len() > 18 {
            return None;
        }
        let num: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let den: u128 = 10u128.pow(digits.len() as u32);
        let scaled = num * u128::from(per_unit);
        if scaled % den != 0 {
            return None;
        }
        total = total.checked_add(u64::try_from(scaled / den).ok()?)?;
    }
    Some(total)
}

/// Go's `time.Time.String()` of a clock time, without the monotonic `m=+…` suffix (it
/// counts from the process's start, which the lab does not model):
/// `2025-01-01 00:00:01.5 +0000 UTC`.
pub(crate) fn go_time(at: Millis) -> String {
    let rfc = crate::cluster::meta::timestamp(at.whole_secs());
    let (date, time) = rfc
        .trim_end_matches('Z')
        .split_once('T')
        .unwrap_or((&rfc, ""));
    let frac = at.as_ms() % 1000;
    let frac = if frac == 0 {
        String::new()
    } else {
        format!(".{}", format!("{frac:03}").trim_end_matches('0'))
    };
    format!("{date} {time}{frac} +0000 UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_print_as_before_and_fractions_naturally() {
        assert_eq!(Millis::secs(3).secs_text(), "3s");
        assert_eq!(Millis::ms(2500).secs_text(), "2.5s");
        assert_eq!(Millis::ms(125).secs_text(), "0.125s");
        assert_eq!(Millis::ms(1050).secs_text(), "1.05s");
        assert_eq!(Millis::ZERO.secs_text(), "0s");
        assert_eq!(Millis::secs(10).tick_arg(), "10");
        assert_eq!(Millis::ms(500).tick_arg(), "500ms");
    }

    #[test]
    fn go_durations() {
        for (ms, want) in [
            (0, "0s"),
            (500, "500ms"),
            (1000, "1s"),
            (1500, "1.5s"),
            (64_000, "1m4s"),
            (122_000, "2m2s"),
            (3_600_000, "1h0m0s"),
            (3_661_500, "1h1m1.5s"),
        ] {
            assert_eq!(Millis::ms(ms).go_duration(), want);
        }
    }

    #[test]
    fn tick_arguments() {
        for (text, ms) in [
            ("10", 10_000),
            ("0", 0),
            ("500ms", 500),
            ("2s", 2000),
            ("1.5s", 1500),
            ("1m", 60_000),
            ("1m30s", 90_000),
            ("2m2s", 122_000),
            ("1h", 3_600_000),
            ("0.5s", 500),
            (".5s", 500),
            ("1.0s", 1000),
            ("0.001s", 1),
        ] {
            assert_eq!(parse_tick(text), Ok(Millis::ms(ms)), "{text}");
        }
    }

    #[test]
    fn bad_tick_arguments_say_what_is_accepted() {
        for text in [
            "soon", "1.5", "10x", "s", "1..5s", "ms", "1.2.3s", "0.0001s", "1ns", "5us",
        ] {
            let e = parse_tick(text).unwrap_err();
            assert!(e.contains("500ms") || e.contains("1ms"), "{text}: {e}");
        }
        assert_eq!(parse_tick("-1").unwrap_err(), "must be ≥ 0");
        assert_eq!(parse_tick("-500ms").unwrap_err(), "must be ≥ 0");
        assert!(
            parse_tick("99999999999999999999999")
                .unwrap_err()
                .starts_with("too large")
        );
        assert!(parse_tick("999999999999999999h").is_err());
    }

    /// Issue 38: "too large; the largest is 18446744073709551 seconds" while the clock
    /// stops at 315,360,000 s. The largest DURATION is the clock's limit, in every form.
    #[test]
    fn the_largest_duration_is_the_clocks_limit() {
        let max = MAX_CLOCK.whole_secs();
        assert_eq!(max, 315_360_000);
        assert_eq!(parse_tick(&max.to_string()), Ok(MAX_CLOCK));
        assert_eq!(parse_tick("87600h"), Ok(MAX_CLOCK));
        for text in [
            (max + 1).to_string(),
            "18446744073709551".to_string(),
            "18446744073709551616".to_string(),
            "87600h1ms".to_string(),
            format!("{}ms", u64::MAX),
        ] {
            let e = parse_tick(&text).unwrap_err();
            assert_eq!(
                e,
                "too large; the clock stops at t=315360000s (10 years of logical seconds), so the largest tick is 315360000 (seconds)",
                "{text}"
            );
        }
        assert!(
            parse_tick("99999999999999999999s")
                .unwrap_err()
                .contains("the largest tick is 315360000 seconds")
        );
    }

    #[test]
    fn go_time_strings() {
        assert_eq!(go_time(Millis::ZERO), "2025-01-01 00:00:00 +0000 UTC");
        assert_eq!(go_time(Millis::ms(1500)), "2025-01-01 00:00:01.5 +0000 UTC");
        assert_eq!(go_time(Millis::secs(3661)), "2025-01-01 01:01:01 +0000 UTC");
    }
}
