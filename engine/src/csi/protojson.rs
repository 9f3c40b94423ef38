//! How csi.proto messages look as JSON: the protojson mapping with `UseProtoNames: true`.
//!
//! Rules followed (`google.golang.org/protobuf/encoding/protojson`, and the proto3 JSON
//! mapping at protobuf.dev/programming-guides/json):
//! - field names are the .proto names (`volume_id`, `capacity_range.required_bytes`);
//! - fields print in .proto declaration order, map keys sorted;
//! - `int64` prints as a JSON string (`"10737418240"`), `int32` as a number; both parse from
//!   either form;
//! - enums print as their value NAME (`"SINGLE_NODE_WRITER"`) and parse from name or number;
//! - proto3 scalars at their default (0, "", false), empty lists/maps and unset messages are
//!   omitted; a set but empty message prints as `{}` (`"block": {}`);
//! - wrappers print bare: `BoolValue` as `true`/`false`, `Int64Value` as a string;
//! - `Timestamp` prints as RFC 3339 in UTC (`"1970-01-01T00:00:05Z"`).
//!
//! Unknown fields are rejected when parsing, as protojson does by default; the JSON names
//! (`volumeId`) are accepted too and read as the proto names ([`proto_field_names`]).

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// True for 0 (omitted by protojson).
pub(crate) fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

/// True for 0 (omitted by protojson).
pub(crate) fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

/// True for false (omitted by protojson).
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// True when the value equals its default (enum value 0: omitted by protojson).
pub(crate) fn is_default<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

struct I64Visitor;

impl Visitor<'_> for I64Visitor {
    type Value = i64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an int64 as a JSON string or number")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::custom(format!("int64 out of range: {v}")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        if v.fract() == 0.0 && v >= i64::MIN as f64 && v <= i64::MAX as f64 {
            Ok(v as i64)
        } else {
            Err(E::custom(format!("invalid int64 value: {v}")))
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
        v.parse::<i64>()
            .map_err(|_| E::custom(format!("invalid int64 value: {v:?}")))
    }
}

/// Serde for an `int64` field: a JSON string on output, string or number on input.
pub mod int64 {
    use super::*;

    /// Writes the number as a JSON string, as protojson does for 64-bit integers.
    pub fn serialize<S: Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&n.to_string())
    }

    /// Reads a JSON string or number.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        d.deserialize_any(I64Visitor)
    }
}

/// Serde for a `google.protobuf.Int64Value` field: absent, or the number as a string.
pub mod opt_int64 {
    use super::*;

    /// Writes `Some(n)` as a JSON string (callers skip `None`).
    pub fn serialize<S: Serializer>(n: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match n {
            Some(v) => s.serialize_str(&v.to_string()),
            None => s.serialize_none(),
        }
    }

    /// Reads a JSON string or number (null means unset).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        struct OptVisitor;
        impl<'de> Visitor<'de> for OptVisitor {
            type Value = Option<i64>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an Int64Value")
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
                d.deserialize_any(I64Visitor).map(Some)
            }
        }
        d.deserialize_option(OptVisitor)
    }
}

/// Declares a proto enum: numeric values as in csi.proto, printed by name, parsed from name
/// or number, with value 0 as the default.
macro_rules! proto_enum {
    (
        $(#[$meta:meta])*
        $name:ident, default $default:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $num:literal => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in numeric order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )+ ];

            /// The numeric value from csi.proto.
            pub fn number(self) -> i32 {
                match self { $( $name::$variant => $num, )+ }
            }

            /// The value NAME from csi.proto, as protojson prints it.
            pub fn name(self) -> &'static str {
                match self { $( $name::$variant => $text, )+ }
            }

            /// The value with this number.
            pub fn from_number(n: i32) -> Option<Self> {
                match n { $( $num => Some($name::$variant), )+ _ => None }
            }

            /// The value with this NAME.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $( $text => Some($name::$variant), )+ _ => None }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                $name::$default
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(f, "a {} name or number", stringify!($name))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| {
                            E::custom(format!("invalid value for enum {}: {v}", stringify!($name)))
                        })
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        i32::try_from(v).ok().and_then($name::from_number).ok_or_else(|| {
                            E::custom(format!("invalid value for enum {}: {v}", stringify!($name)))
                        })
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        i32::try_from(v).ok().and_then($name::from_number).ok_or_else(|| {
                            E::custom(format!("invalid value for enum {}: {v}", stringify!($name)))
                        })
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
pub(crate) use proto_enum;

/// A `google.protobuf.Timestamp`: seconds and nanos since the Unix epoch (UTC).
///
/// The lab has no wall clock: the driver stamps snapshots with its logical clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub seconds: i64,
    /// Nanoseconds within the second (0..1e9).
    pub nanos: i32,
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

impl Timestamp {
    /// A timestamp at whole seconds.
    pub(crate) fn from_seconds(seconds: i64) -> Self {
        Timestamp { seconds, nanos: 0 }
    }

    /// A time in milliseconds since 1970-01-01T00:00:00Z.
    pub fn from_millis(millis: i64) -> Self {
        Timestamp {
            seconds: millis.div_euclid(1000),
            nanos: i32::try_from(millis.rem_euclid(1000) * 1_000_000).unwrap_or(0),
        }
    }

    /// RFC 3339 in UTC, as protojson prints it: fractional digits only when nanos ≠ 0, in
    /// groups of 3, 6 or 9.
    pub(crate) fn to_rfc3339(self) -> String {
        let days = self.seconds.div_euclid(86_400);
        let secs = self.seconds.rem_euclid(86_400);
        let (y, mo, d) = civil_from_days(days);
        let mut out = format!(
            "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        );
        if self.nanos != 0 {
            let n = self.nanos.rem_euclid(1_000_000_000);
            if n % 1_000_000 == 0 {
                out.push_str(&format!(".{:03}", n / 1_000_000));
            } else if n % 1000 == 0 {
                out.push_str(&format!(".{:06}", n / 1000));
            } else {
                out.push_str(&format!(".{n:09}"));
            }
        }
        out.push('Z');
        out
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.frac]Z`.
    pub(crate) fn parse_rfc3339(s: &str) -> Option<Self> {
        let s = s.strip_suffix('Z')?;
        let (date, time) = s.split_once('T')?;
        let mut dp = date.splitn(3, '-');
        let y: i64 = dp.next()?.parse().ok()?;
        let mo: i64 = dp.next()?.parse().ok()?;
        let d: i64 = dp.next()?.parse().ok()?;
        let (hms, frac) = match time.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (time, None),
        };
        let mut tp = hms.splitn(3, ':');
        let h: i64 = tp.next()?.parse().ok()?;
        let mi: i64 = tp.next()?.parse().ok()?;
        let se: i64 = tp.next()?.parse().ok()?;
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 59 {
            return None;
        }
        let nanos = match frac {
            Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|b| b.is_ascii_digit()) => {
                let v: i32 = f.parse().ok()?;
                v * 10i32.pow(9 - f.len() as u32)
            }
            Some(_) => return None,
            None => 0,
        };
        Some(Timestamp {
            seconds: days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se,
            nanos,
        })
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse_rfc3339(&s)
            .ok_or_else(|| de::Error::custom(format!("invalid Timestamp value {s:?}")))
    }
}

/// A byte count as Kubernetes' `resource.NewQuantity(n, BinarySI).String()` prints it:
/// the largest exact binary suffix (`10Gi`, `1536Mi`), else the plain number.
pub(crate) fn binary_quantity(n: i64) -> String {
    const SUFFIXES: [(&str, i64); 6] = [
        ("Ei", 1 << 60),
        ("Pi", 1 << 50),
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
    ];
    if n == 0 {
        return "0".to_string();
    }
    for (suffix, unit) in SUFFIXES {
        if n % unit == 0 {
            return format!("{}{suffix}", n / unit);
        }
    }
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_like_protojson() {
        assert_eq!(
            Timestamp::from_seconds(0).to_rfc3339(),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            Timestamp::from_seconds(1_700_000_000).to_rfc3339(),
            "2023-11-14T22:13:20Z"
        );
        let t = Timestamp {
            seconds: 5,
            nanos: 500_000_000,
        };
        assert_eq!(t.to_rfc3339(), "1970-01-01T00:00:05.500Z");
        assert_eq!(Timestamp::parse_rfc3339(&t.to_rfc3339()), Some(t));
        assert_eq!(
            Timestamp::parse_rfc3339("2023-11-14T22:13:20Z"),
            Some(Timestamp::from_seconds(1_700_000_000))
        );
        assert_eq!(Timestamp::parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn quantities_use_binary_suffixes() {
        assert_eq!(binary_quantity(10 << 30), "10Gi");
        assert_eq!(binary_quantity(1536 << 20), "1536Mi");
        assert_eq!(binary_quantity(1000), "1000");
        assert_eq!(binary_quantity(0), "0");
    }
}

/// Fields whose value is a protobuf `map<string, …>`: their keys are data, never renamed.
const MAP_FIELDS: &[&str] = &[
    "parameters",
    "secrets",
    "volume_context",
    "publish_context",
    "mutable_parameters",
    "segments",
];

/// `volumeId` → `volume_id`: protojson's lowerCamelCase JSON name back to the proto name.
/// A key that is no field's JSON name (`volumeID`: protoc never makes two capitals in a row
/// from a csi.proto name) is kept, so the unknown-field error names it as written.
fn proto_name(key: &str) -> String {
    let bytes = key.as_bytes();
    if bytes
        .windows(2)
        .any(|w| w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase())
        || bytes.first().is_some_and(u8::is_ascii_uppercase)
    {
        return key.to_string();
    }
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A protojson request with the JSON names (`volumeId`, `volumeCapabilities`) a protojson
/// parser accepts alongside the proto names, rewritten to the proto names the lab's types
/// use. Keys inside map fields (`parameters`, `secrets`, `volume_context`, …) are left as
/// they are.
pub(crate) fn proto_field_names(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, val)| {
                    let name = proto_name(k);
                    let val = if MAP_FIELDS.contains(&name.as_str()) {
                        val.clone()
                    } else {
                        proto_field_names(val)
                    };
                    (name, val)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(proto_field_names).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod json_name_tests {
    use super::proto_field_names;
    use serde_json::json;

    #[test]
    fn json_names_become_proto_names_and_map_keys_stay() {
        let v = json!({
            "volumeId": "vol-1",
            "volumeCapability": {"accessMode": {"mode": "SINGLE_NODE_WRITER"}, "mount": {"fsType": "ext4"}},
            "volumeContext": {"fooBar": "x"},
            "accessibilityRequirements": {"requisite": [{"segments": {"topology.kubernetes.io/zone": "z"}}]},
            "volume_id": "vol-1"
        });
        assert_eq!(
            proto_field_names(&v),
            json!({
                "volume_id": "vol-1",
                "volume_capability": {"access_mode": {"mode": "SINGLE_NODE_WRITER"}, "mount": {"fs_type": "ext4"}},
                "volume_context": {"fooBar": "x"},
                "accessibility_requirements": {"requisite": [{"segments": {"topology.kubernetes.io/zone": "z"}}]}
            })
        );
    }
}
