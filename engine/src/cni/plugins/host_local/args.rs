//! `CNI_ARGS` for host-local: `types.LoadArgs` into `IPAMEnvArgs { CommonArgs; IP ip.IP }`
//! (`containernetworking/cni:pkg/types/args.go`; `containernetworking/plugins:
//! plugins/ipam/host-local/backend/allocator/config.go`, `pkg/ip/ip.go`).
//!
//! Keys are Go struct field names, matched case-sensitively: `IP`, `IgnoreUnknown`, and —
//! because reflection finds the embedded struct too — `CommonArgs`, which cannot be set.

use super::range::{Cidr, parse_ip};
use std::net::IpAddr;

/// The parsed `CNI_ARGS`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IpamEnvArgs {
    /// `IP=<ip>[/<prefix>]`: the requested address (`ip.IP.ToIP()`), if any.
    pub ip: Option<IpAddr>,
    /// `IgnoreUnknown`.
    pub ignore_unknown: bool,
}

/// `ip.ParseIP`: `<ip>` or `<ip>/<prefix>`; the prefix is kept by Go but only the address is
/// used. Errors are `ip.IP.UnmarshalText`'s `invalid IP address <text>`.
pub(crate) fn parse_cni_ip(text: &str) -> Result<Option<IpAddr>, String> {
    if text.is_empty() {
        // An empty text is an empty IP, whose ToIP() is nil.
        return Ok(None);
    }
    let parsed = if text.contains('/') {
        Cidr::parse(text).ok().map(|c| c.ip)
    } else {
        parse_ip(text)
    };
    match parsed {
        Some(ip) => Ok(Some(ip)),
        None => Err(format!("invalid IP address {text}")),
    }
}

/// `types.LoadArgs(args, &IPAMEnvArgs{})`.
pub(crate) fn load_env_args(args: &str) -> Result<IpamEnvArgs, String> {
    let mut out = IpamEnvArgs::default();
    if args.is_empty() {
        return Ok(out);
    }
    let mut any_unknown = false;
    for (pair, kv) in crate::cni::plugins::common::arg_items(args) {
        let Some((key, value)) = kv else {
            return Err(format!("ARGS: invalid pair {}", go_quote(pair)));
        };
        match key {
            "IP" => {
                out.ip = parse_cni_ip(value).map_err(|e| value_error(pair, &e))?;
            }
            "IgnoreUnknown" => {
                // strings.ToLower, then the four accepted words; for ASCII text that is
                // a case-insensitive compare, with no copy made.
                let is = |word: &str| value.is_ascii() && value.eq_ignore_ascii_case(word);
                out.ignore_unknown = if is("1") || is("true") {
                    true
                } else if is("0") || is("false") {
                    false
                } else {
                    let lower = value.to_lowercase();
                    match lower.as_str() {
                        "1" | "true" => true,
                        "0" | "false" => false,
                        _ => {
                            return Err(value_error(
                                pair,
                                &format!("boolean unmarshal error: invalid input {lower}"),
                            ));
                        }
                    }
                };
            }
            "CommonArgs" => {
                return Err("ARGS: cannot unmarshal into field 'CommonArgs' - type '*types.CommonArgs' does not implement encoding.TextUnmarshaler".to_string());
            }
            _ => any_unknown = true,
        }
    }
    if any_unknown && !out.ignore_unknown {
        // Every pair is valid here: a second pass lists the unknown ones, only when they
        // are an error.
        let quoted: Vec<String> = crate::cni::plugins::common::arg_items(args)
            .filter_map(|(pair, kv)| {
                kv.filter(|(k, _)| !matches!(*k, "IP" | "IgnoreUnknown" | "CommonArgs"))
                    .map(|_| pair)
            })
            .map(go_quote)
            .collect();
        return Err(format!("ARGS: unknown args [{}]", quoted.join(" ")));
    }
    Ok(out)
}

fn value_error(pair: &str, err: &str) -> String {
    format!(
        "ARGS: error parsing value of pair {}: {err}",
        go_quote(pair)
    )
}

/// Go's `strconv.Quote` (what `%q` prints for a string).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || c == '\u{feff}' => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_with_prefix_is_accepted() {
        let a = load_env_args("IP=10.1.2.11/24").unwrap();
        assert_eq!(a.ip, Some("10.1.2.11".parse().unwrap()));
    }

    #[test]
    fn empty_ip_requests_nothing() {
        assert_eq!(load_env_args("IP=").unwrap().ip, None);
    }

    #[test]
    fn messages_match_the_real_plugin() {
        // Captured from Debian's host-local 1.1.1.
        assert_eq!(
            load_env_args("IP=foo").unwrap_err(),
            "ARGS: error parsing value of pair \"IP=foo\": invalid IP address foo"
        );
        assert_eq!(
            load_env_args("A=1;B=\"x\"").unwrap_err(),
            "ARGS: unknown args [\"A=1\" \"B=\\\"x\\\"\"]"
        );
        assert_eq!(
            load_env_args("ip=10.1.3.9").unwrap_err(),
            "ARGS: unknown args [\"ip=10.1.3.9\"]"
        );
        assert_eq!(
            load_env_args("IgnoreUnknown=maybe").unwrap_err(),
            "ARGS: error parsing value of pair \"IgnoreUnknown=maybe\": boolean unmarshal error: invalid input maybe"
        );
        assert_eq!(
            load_env_args("IP=1.2.3.4;").unwrap_err(),
            "ARGS: invalid pair \"\""
        );
    }

    #[test]
    fn ignore_unknown_anywhere_in_the_list() {
        let a = load_env_args("K8S_POD_NAME=web;IP=10.0.0.5;IgnoreUnknown=TRUE").unwrap();
        assert!(a.ignore_unknown);
        assert_eq!(a.ip, Some("10.0.0.5".parse().unwrap()));
    }
}
