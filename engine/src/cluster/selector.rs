//! `metav1.LabelSelector`: `matchLabels` and `matchExpressions` (In, NotIn, Exists,
//! DoesNotExist), ANDed together. Matching follows `LabelSelectorAsSelector` in
//! k8s.io/apimachinery `pkg/apis/meta/v1/helpers.go` and `labels/selector.go`:
//! an empty selector matches everything; `NotIn` matches when the key is absent.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A label selector in Kubernetes JSON shape.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// `{key: value}` pairs that must all be present.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Requirements that must all hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One `matchExpressions` entry. The operator is kept as text so that validation can
/// reject a bad one with the apiserver's message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LabelSelectorRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// Values for `In`/`NotIn`; empty for the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl LabelSelector {
    /// The selector `{}`: matches every object.
    pub fn everything() -> Self {
        LabelSelector::default()
    }

    /// A selector of `matchLabels` pairs.
    pub fn labels(pairs: &[(&str, &str)]) -> Self {
        LabelSelector {
            match_labels: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: Vec::new(),
        }
    }

    /// True for `{}`.
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Whether it selects by the one label `key=value` and nothing else: it has a
    /// requirement, and each is that label (`matchLabels`, or `key In (value)`). A
    /// selector that takes more (`key Exists`, `key In (value, other)`, `{}`) or fewer (a
    /// second label) pods is not.
    pub fn is_exactly(&self, key: &str, value: &str) -> bool {
        let labels_ok = self
            .match_labels
            .iter()
            .all(|(k, v)| k == key && v == value);
        let exprs_ok = self.match_expressions.iter().all(|r| {
            r.key == key
                && r.operator == "In"
                && !r.values.is_empty()
                && r.values.iter().all(|v| v == value)
        });
        !self.is_empty() && labels_ok && exprs_ok
    }

    /// Does the selector match this label set? An unknown operator matches nothing
    /// (validation rejects it before a policy is stored).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| r.matches(labels))
    }

    /// Short text for verdicts: `app=web,tier in (a,b)`, or `{}` for the empty selector.
    pub fn describe(&self) -> String {
        if self.is_empty() {
            return "{}".to_string();
        }
        let mut parts: Vec<String> = self
            .match_labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for r in &self.match_expressions {
            parts.push(match r.operator.as_str() {
                "In" => format!("{} in ({})", r.key, r.values.join(",")),
                "NotIn" => format!("{} notin ({})", r.key, r.values.join(",")),
                "Exists" => r.key.clone(),
                "DoesNotExist" => format!("!{}", r.key),
                other => format!("{} {other} ({})", r.key, r.values.join(",")),
            });
        }
        parts.join(",")
    }
}

impl LabelSelectorRequirement {
    /// Does this one requirement hold for the label set?
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        use super::label_query::Op;
        let op = match self.operator.as_str() {
            "In" => Op::In,
            "NotIn" => Op::NotIn,
            "Exists" => Op::Exists,
            "DoesNotExist" => Op::DoesNotExist,
            // Validation refuses any other operator before a selector is stored.
            _ => return false,
        };
        op.holds(labels.get(&self.key), &self.values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_labels: BTreeMap::new(),
            match_expressions: vec![LabelSelectorRequirement {
                key: key.into(),
                operator: op.into(),
                values: values.iter().map(|s| s.to_string()).collect(),
            }],
        }
    }

    #[test]
    fn empty_matches_everything() {
        assert!(LabelSelector::everything().matches(&l(&[])));
        assert!(LabelSelector::everything().matches(&l(&[("a", "b")])));
    }

    #[test]
    fn match_labels_all_must_hold() {
        let s = LabelSelector::labels(&[("app", "db"), ("tier", "be")]);
        assert!(s.matches(&l(&[("app", "db"), ("tier", "be"), ("x", "y")])));
        assert!(!s.matches(&l(&[("app", "db")])));
        assert!(!s.matches(&l(&[("app", "web"), ("tier", "be")])));
    }

    #[test]
    fn operators() {
        let web = l(&[("app", "web")]);
        let db = l(&[("app", "db")]);
        let none = l(&[]);
        let s_in = expr("app", "In", &["web", "api"]);
        assert!(s_in.matches(&web) && !s_in.matches(&db) && !s_in.matches(&none));
        let s_notin = expr("app", "NotIn", &["web"]);
        assert!(!s_notin.matches(&web) && s_notin.matches(&db) && s_notin.matches(&none));
        let s_ex = expr("app", "Exists", &[]);
        assert!(s_ex.matches(&web) && !s_ex.matches(&none));
        let s_dne = expr("app", "DoesNotExist", &[]);
        assert!(!s_dne.matches(&web) && s_dne.matches(&none));
        assert!(!expr("app", "Gt", &["1"]).matches(&web));
    }

    #[test]
    fn json_shape() {
        let s: LabelSelector = serde_json::from_str(
            r#"{"matchLabels":{"app":"db"},"matchExpressions":[{"key":"env","operator":"Exists"}]}"#,
        )
        .unwrap();
        assert_eq!(s.describe(), "app=db,env");
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"matchLabels":{"app":"db"},"matchExpressions":[{"key":"env","operator":"Exists"}]}"#
        );
        assert_eq!(
            serde_json::to_string(&LabelSelector::everything()).unwrap(),
            "{}"
        );
    }

    /// Helpers' play, stop 66: a lesson's "select app=db" was met by `app Exists` and
    /// `app In (db, web)`; only selectors that take exactly the label's pods are it.
    #[test]
    fn exactly_one_label_is_matchlabels_or_in_of_that_value() {
        let labels = LabelSelector {
            match_labels: l(&[("app", "db")]),
            match_expressions: Vec::new(),
        };
        assert!(labels.is_exactly("app", "db"));
        assert!(expr("app", "In", &["db"]).is_exactly("app", "db"));
        for wide in [
            LabelSelector::everything(),
            expr("app", "Exists", &[]),
            expr("app", "In", &["db", "web"]),
            expr("app", "NotIn", &["web"]),
            expr("tier", "In", &["db"]),
            LabelSelector {
                match_labels: l(&[("app", "db"), ("tier", "x")]),
                match_expressions: Vec::new(),
            },
        ] {
            assert!(!wide.is_exactly("app", "db"), "{wide:?}");
        }
    }
}
