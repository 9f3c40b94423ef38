//! `-o yaml`: a JSON document printed as kubectl prints YAML (`sigs.k8s.io/yaml` over
//! go-yaml v2): keys sorted, sequences not indented under their key, a string plain when
//! YAML would read it back as the same string, single-quoted when not, double-quoted when
//! it holds control characters, and a multi-line string as a `|`/`|-` literal block.

use serde_json::Value;

/// The document as YAML text (ending in a newline).
pub(crate) fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => map(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => seq(&mut out, a, 0),
        other => {
            out.push_str(&scalar(other, 0));
            out.push('\n');
        }
    }
    out
}

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn map(out: &mut String, m: &serde_json::Map<String, Value>, indent: usize) {
    let mut first = true;
    for (k, v) in m {
        if !first {
            pad(out, indent);
        }
        first = false;
        out.push_str(&string(k, indent));
        out.push(':');
        value_after_key(out, v, indent);
    }
}

/// A value after `key:` (or after `- ` for a sequence item of a scalar).
fn value_after_key(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Object(c) if !c.is_empty() => {
            out.push('\n');
            pad(out, indent + 2);
            map(out, c, indent + 2);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            pad(out, indent);
            seq(out, a, indent);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other, indent));
            out.push('\n');
        }
    }
}

fn seq(out: &mut String, a: &[Value], indent: usize) {
    let mut first = true;
    for v in a {
        if !first {
            pad(out, indent);
        }
        first = false;
        out.push_str("- ");
        match v {
            Value::Object(c) if !c.is_empty() => map(out, c, indent + 2),
            Value::Array(inner) if !inner.is_empty() => seq(out, inner, indent + 2),
            other => {
                out.push_str(&scalar(other, indent));
                out.push('\n');
            }
        }
    }
}

fn scalar(v: &Value, indent: usize) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s, indent),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A string as go-yaml v2 emits it.
fn string(s: &str, indent: usize) -> String {
    if s.contains('\n') && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        let chomp = if s.ends_with('\n') { "|" } else { "|-" };
        let mut out = String::from(chomp);
        for line in s.trim_end_matches('\n').split('\n') {
            out.push('\n');
            if !line.is_empty() {
                out.extend(std::iter::repeat_n(' ', indent + 2));
                out.push_str(line);
            }
        }
        return out;
    }
    // A string YAML would resolve to another type (a number, a bool, null, a timestamp)
    // is double-quoted (go-yaml v2 `encode.go` stringv), as is one with control characters.
    if resolves_to_non_string(s) || s.chars().any(|c| c.is_control()) {
        return serde_json::to_string(s).unwrap_or_default();
    }
    if plain_ok(s) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "''"))
}

/// go-yaml v2's `resolve`: null, bools (YAML 1.1 spellings), numbers, timestamps.
fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
        ".inf", ".Inf", ".INF", "-.inf", "+.inf", ".nan", ".NaN", ".NAN",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let t = s.strip_prefix(['+', '-']).unwrap_or(s);
    if t.is_empty() {
        return false;
    }
    let digits = |x: &str| !x.is_empty() && x.chars().all(|c| c.is_ascii_digit() || c == '_');
    let number = digits(t)
        || t.strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit() || c == '_'))
        || t.strip_prefix("0b")
            .is_some_and(|b| !b.is_empty() && b.chars().all(|c| c == '0' || c == '1' || c == '_'))
        || (t.parse::<f64>().is_ok()
            && t.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-' | '_')));
    // A timestamp: YYYY-MM-DD, optionally with a time.
    let b = s.as_bytes();
    let timestamp = b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5].is_ascii_digit()
        && (b[6] == b'-' || (b[6].is_ascii_digit() && b[7] == b'-'));
    number || timestamp
}

/// Whether the emitter may write `s` plain (no indicator at the start, no `: ` or ` #`).
fn plain_ok(s: &str) -> bool {
    if s.starts_with(' ') || s.ends_with(' ') {
        return false;
    }
    let special = [
        '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@',
        '`',
    ];
    if s.starts_with(special) {
        return false;
    }
    !(s.contains(": ") || s.contains(" #") || s.ends_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubectl_layout() {
        let v = json!({
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "p1", "resourceVersion": "12", "annotations": {
                "k8s.v1.cni.cncf.io/networks": "[{\"name\":\"blue\"}]",
                "k8s.v1.cni.cncf.io/network-status": "[{\n    \"name\": \"lab-net\"\n}]"
            }},
            "spec": {"containers": [{"name": "app", "ports": []}], "nodeName": "node-1"},
            "status": {"phase": "Running", "empty": "", "yes": "yes"}
        });
        assert_eq!(
            to_yaml(&v),
            "apiVersion: v1
kind: Pod
metadata:
  annotations:
    k8s.v1.cni.cncf.io/network-status: |-
      [{
          \"name\": \"lab-net\"
      }]
    k8s.v1.cni.cncf.io/networks: '[{\"name\":\"blue\"}]'
  name: p1
  resourceVersion: \"12\"
spec:
  containers:
  - name: app
    ports: []
  nodeName: node-1
status:
  empty: \"\"
  phase: Running
  yes: \"yes\"
"
            .replace("  yes: \"yes\"", "  \"yes\": \"yes\"")
        );
    }
}
