//! Small wording helpers for what the lab prints.

/// `1 pod`, `2 pods`: a count with the noun in the right number.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a JSON value is, as an error names it: `null`, `a string`, `an array`.
pub(crate) fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_singular() {
        assert_eq!(super::plural(1, "pod", "pods"), "1 pod");
        assert_eq!(super::plural(0, "pod", "pods"), "0 pods");
        assert_eq!(super::plural(2, "claim", "claims"), "2 claims");
    }
}
