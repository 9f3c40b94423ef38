//! `label KIND NAME KEY=VALUE… [KEY-…]`: kubectl label for the kinds whose resource says
//! it works on them (`crate::resource`: pods, nodes and namespaces). The
//! rules are kubectl's (`staging/src/k8s.io/kubectl/pkg/cmd/label/label.go`): `KEY-` removes
//! a label; changing an existing label's value needs `--overwrite`; `--resource-version RV`
//! makes the update conditional, so a stale version is the API server's Conflict; the result
//! line is `KIND/NAME labeled`, `unlabeled` or `not labeled`.

use super::{Lab, LabError, validate};
use crate::command::grammar::LabelArgs;
use crate::render::{Line, Outcome, Role};
use std::collections::BTreeMap;

/// What the arguments ask: labels to set, keys to remove.
struct Change {
    set: BTreeMap<String, String>,
    remove: Vec<String>,
}

fn parse_change(words: &[String]) -> Result<Change, LabError> {
    let mut change = Change {
        set: BTreeMap::new(),
        remove: Vec::new(),
    };
    if words.is_empty() {
        return Err(LabError::msg(
            "at least one label update is required: KEY=VALUE to set, KEY- to remove (e.g. `label pod web tier=frontend`)",
        ));
    }
    for w in words {
        if let Some(key) = w.strip_suffix('-')
            && !w.contains('=')
        {
            validate::label(&format!("{key}=")).map_err(LabError::msg)?;
            change.remove.push(key.to_string());
        } else {
            let (k, v) = validate::label(w).map_err(LabError::msg)?;
            if change.remove.contains(&k) {
                return Err(LabError::msg(format!(
                    "can not both modify and remove the following label(s) in the same command: {k}"
                )));
            }
            change.set.insert(k, v);
        }
    }
    if let Some(k) = change.remove.iter().find(|k| change.set.contains_key(*k)) {
        return Err(LabError::msg(format!(
            "can not both modify and remove the following label(s) in the same command: {k}"
        )));
    }
    Ok(change)
}

/// The new labels, or kubectl's refusal to overwrite without `--overwrite`.
fn apply(
    current: &BTreeMap<String, String>,
    change: &Change,
    overwrite: bool,
) -> Result<BTreeMap<String, String>, LabError> {
    if !overwrite {
        let clashes: Vec<String> = change
            .set
            .iter()
            .filter_map(|(k, v)| {
                let cur = current.get(k)?;
                (cur != v)
                    .then(|| format!("'{k}' already has a value ({cur}), and --overwrite is false"))
            })
            .collect();
        if !clashes.is_empty() {
            return Err(LabError::msg(clashes.join(", ")));
        }
    }
    let mut next = current.clone();
    for k in &change.remove {
        next.remove(k);
    }
    next.extend(change.set.clone());
    Ok(next)
}

fn parse_rv(rv: &Option<String>) -> Result<Option<u64>, LabError> {
    rv.as_deref()
        .map(|s| {
            s.parse::<u64>().map_err(|_| {
                LabError::msg(format!(
                    "invalid --resource-version {s:?}: a resourceVersion is the number `get KIND NAME -o json` shows under metadata"
                ))
            })
        })
        .transpose()
}

impl Lab {
    /// `label KIND NAME …`.
    pub fn label(&mut self, a: &LabelArgs) -> Result<super::Outcome, LabError> {
        let kind = crate::resource::resolve(&a.kind)?;
        let change = parse_change(&a.labels)?;
        let rv = parse_rv(&a.resource_version)?;
        if !kind.labels() {
            return Err(LabError::msg(format!(
                "label works on pods, nodes and namespaces here, not {}",
                kind.names().plural
            )));
        }
        if kind.namespaced() {
            self.existing_namespace(&a.ns)?;
        }
        let mut was = BTreeMap::new();
        let (mut changed, mut fewer) = (false, false);
        kind.relabel(self, &a.ns, &a.name, &mut |meta| {
            was = meta.labels.clone();
            meta.labels = apply(&was, &change, a.overwrite)?;
            if let Some(rv) = rv {
                meta.resource_version = rv;
            }
            changed = meta.labels != was;
            fewer = meta.labels.len() < was.len() && !a.overwrite;
            Ok(changed || rv.is_some())
        })?;
        let name = format!("{}/{}", kind.names().singular, a.name);
        let word = match (changed, fewer) {
            (false, _) => "not labeled",
            (true, true) => "unlabeled",
            (true, false) => "labeled",
        };
        let mut out = Outcome::empty();
        for k in &change.remove {
            if !was.contains_key(k) {
                out.plain(format!("label {k:?} not found."));
            }
        }
        out.line(
            Line::new()
                .push(name, Role::Name)
                .push(format!(" {word}"), Role::Good),
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kubectl_label_rules() {
        let cur = BTreeMap::from([("app".to_string(), "web".to_string())]);
        let c = parse_change(&words(&["app=db"])).unwrap();
        assert_eq!(
            apply(&cur, &c, false).unwrap_err().message,
            "'app' already has a value (web), and --overwrite is false"
        );
        assert_eq!(apply(&cur, &c, true).unwrap()["app"], "db");
        // The same value needs no --overwrite.
        let c = parse_change(&words(&["app=web", "tier=fe"])).unwrap();
        assert_eq!(apply(&cur, &c, false).unwrap().len(), 2);
        let c = parse_change(&words(&["app-"])).unwrap();
        assert!(apply(&cur, &c, false).unwrap().is_empty());
        assert!(
            parse_change(&words(&["app-", "app=x"]))
                .err()
                .unwrap()
                .message
                .contains("can not both modify and remove")
        );
        assert!(parse_change(&[]).is_err());
        assert!(parse_change(&words(&["Bad Key=x"])).is_err());
    }
}
