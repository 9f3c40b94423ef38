//! CNI version strings: parsing, comparison and the checks skel and libcni make
//! (`pkg/version`).

use super::types::{CniError, code};

/// The spec version this lab implements (`version.Current()`).
pub(crate) const CURRENT: &str = "1.1.0";

/// Parse `major.minor.patch` into a comparable triple.
pub fn parse(v: &str) -> Result<(u64, u64, u64), String> {
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() != 3 {
        return Err(format!("unable to parse version {v:?}"));
    }
    let num = |s: &str| {
        s.parse::<u64>()
            .map_err(|_| format!("unable to parse version {v:?}"))
    };
    Ok((num(parts[0])?, num(parts[1])?, num(parts[2])?))
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
        assert!(parse("1.0").is_err());
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
