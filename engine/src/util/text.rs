//! Small wording helpers for what the lab prints.

/// `1 pod`, `2 pods`: a count with the noun in the right number.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
