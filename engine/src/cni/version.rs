//! CNI version strings: parsing, comparison and the checks skel and libcni make
//! (`pkg/version`).

use super::types::{CniError, code};

/// The spec version this lab implements (`version.Current()`).
pub(crate) const CURRENT: &str = "1.1.0";

/// `version.ParseVersion` (`pkg/version/plugin.go`): `major[.minor[.micro]]`, each part as
/// `strconv.Atoi` reads it, into a comparable triple; no version declared is 0.1.0.
///
/// ```go
/// major, err := strconv.Atoi(parts[0])
/// if err != nil {
///     return -1, -1, -1, fmt.Errorf("failed to convert major version part %q: %w", parts[0], err)
/// }
/// ```
pub fn parse(v: &str) -> Result<(i64, i64, i64), String> {
    use crate::net::validate::go_quote;
    if v.is_empty() {
        return Ok((0, 1, 0));
    }
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() >= 4 {
        return Err(format!("invalid version {}: too many parts", go_quote(v)));
    }
    let part = |i: usize, name: &str| -> Result<i64, String> {
        match parts.get(i) {
            None => Ok(0),
            Some(p) => atoi(p)
                .map_err(|e| format!("failed to convert {name} version part {}: {e}", go_quote(p))),
        }
    };
    Ok((part(0, "major")?, part(1, "minor")?, part(2, "micro")?))
}

/// `strconv.Atoi` on a 64-bit platform, with its error text (`strconv.Atoi: parsing "abc":
/// invalid syntax`, `… value out of range`).
fn atoi(s: &str) -> Result<i64, String> {
    use std::num::IntErrorKind;
    s.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "value out of range",
            _ => "invalid syntax",
        };
        format!(
            "strconv.Atoi: parsing {}: {why}",
            crate::net::validate::go_quote(s)
        )
    })
}

/// `version.GreaterThanOrEqualTo(a, b)`.
pub(crate) fn gte(a: &str, b: &str) -> Result<bool, String> {
    Ok(parse(a)? >= parse(b)?)
}

/// The config's version as skel's `ConfVersionDecoder` reads it: missing means "0.1.0".
pub(crate) fn config_version(conf: &serde_json::Value) -> Result<String, CniError> {
    match conf.get("cniVersion") {
        None | Some(serde_json::Value::Null) => Ok("0.1.0".into()),
        Some(serde_json::Value::String(s)) if s.is_empty() => Ok("0.1.0".into()),
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(CniError::new(
            code::DECODING_FAILURE,
            format!(
                "json: cannot unmarshal {} into Go struct field .cniVersion of type string",
                super::conf::go_json_kind(other)
            ),
        )),
    }
}

/// `version.Reconciler.Check`: the config version must be exactly one the plugin supports.
pub fn reconcile(config: &str, supported: &[&str]) -> Result<(), CniError> {
    if supported.contains(&config) {
        return Ok(());
    }
    let list: Vec<String> = supported.iter().map(|v| format!("{v:?}")).collect();
    Err(
        CniError::new(code::INCOMPATIBLE_VERSION, "incompatible CNI versions").with_details(
            format!("config is {config:?}, plugin supports [{}]", list.join(" ")),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_numerically() {
        assert!(gte("1.0.0", "0.4.0").unwrap());
        assert!(gte("0.10.0", "0.4.0").unwrap());
        assert!(!gte("0.3.1", "0.4.0").unwrap());
        // ParseVersion: missing parts are 0, no version is 0.1.0, parts are Atoi's.
        assert_eq!(parse("1.0"), Ok((1, 0, 0)));
        assert_eq!(parse(""), Ok((0, 1, 0)));
        assert_eq!(
            gte("abc", "0.4.0").unwrap_err(),
            "failed to convert major version part \"abc\": strconv.Atoi: parsing \"abc\": invalid syntax"
        );
        assert_eq!(
            parse("1.x.0").unwrap_err(),
            "failed to convert minor version part \"x\": strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(
            parse("1.0.99999999999999999999").unwrap_err(),
            "failed to convert micro version part \"99999999999999999999\": strconv.Atoi: parsing \"99999999999999999999\": value out of range"
        );
        assert_eq!(
            parse("1.0.0.0").unwrap_err(),
            "invalid version \"1.0.0.0\": too many parts"
        );
    }

    #[test]
    fn reconcile_names_config_and_supported() {
        let e = reconcile("1.1.0", &["0.4.0", "1.0.0"]).unwrap_err();
        assert_eq!(e.code, 1);
        assert_eq!(e.msg, "incompatible CNI versions");
        assert_eq!(
            e.details,
            "config is \"1.1.0\", plugin supports [\"0.4.0\" \"1.0.0\"]"
        );
    }
}
