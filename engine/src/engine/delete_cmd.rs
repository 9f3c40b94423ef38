//! `delete KIND NAME`, kubectl's verb order, routed to the lab's own `pod delete`, `pvc
//! delete`, … so that the output and the journal are theirs; `delete -f FILE` deletes what
//! a manifest names (`super::apply_cmd`), and `delete pv NAME` a PersistentVolume (Terminating while Bound).
//!
//! Argument errors use kubectl's words (the resource builder,
//! `staging/src/k8s.io/cli-runtime/pkg/resource/builder.go`).

use super::listing::{Sel, resource_name_pairs};
use super::{Lab, LabError};
use crate::command::Command;
use crate::command::grammar::DeleteArgs;
use crate::render::Outcome;
use crate::resource::{self, AnyResource, Delete};

impl Lab {
    /// `delete KIND NAME… [-n NS]`, `delete KIND -l SELECTOR` or `delete KIND --all`: the
    /// lab's own delete command for that kind, once per object.
    pub fn delete(&mut self, d: DeleteArgs) -> Result<Outcome, LabError> {
        // `delete pod web --step`: `pod delete web --step` (the desk steps its CSI calls).
        if let Some(stepped) = stepped(&d) {
            return self.dispatch(stepped.map_err(LabError::msg)?);
        }
        if let Some(f) = &d.file {
            let ns = (d.ns != "default").then_some(d.ns.as_str());
            return self.delete_manifest(f, ns);
        }
        // `--all` is the selector that matches everything (kubectl's builder:
        // `labels.Everything()`), and may not be given with another.
        let selector = match (d.all, &d.selector) {
            (true, Some(_)) => {
                return Err(LabError::msg(
                    "setting 'all' parameter but found a non empty selector. ",
                ));
            }
            (true, None) => Some(String::new()),
            (false, sel) => sel.clone(),
        };
        let names = match (&selector, d.names.is_empty()) {
            (Some(_), false) => {
                return Err(LabError::msg(
                    "name cannot be provided when a selector is specified",
                ));
            }
            (Some(sel), true) => {
                let kind = resource::resolve(d.kind.as_deref().unwrap_or(""))?;
                let names = self.names_matching(kind, &d.ns, sel)?;
                if names.is_empty() {
                    let mut out = Outcome::empty();
                    out.plain("No resources found");
                    return Ok(out);
                }
                names
            }
            (None, _) => d.names.clone(),
        };
        // (kind, name) pairs: the KIND/NAME form when an argument has a `/` (the grammar
        // already read `pod/a pod/b` as `pod a b`), else the kind and each name.
        let args: Vec<&str> = d.kind.iter().chain(&names).map(String::as_str).collect();
        let targets: Vec<(Option<String>, Option<String>)> =
            if selector.is_none() && args.iter().any(|a| a.contains('/')) {
                resource_name_pairs(&args)?
                    .into_iter()
                    .map(|(k, n)| (Some(k), Some(n)))
                    .collect()
            } else if names.is_empty() {
                vec![(d.kind.clone(), None)]
            } else {
                names
                    .iter()
                    .map(|n| (d.kind.clone(), Some(n.clone())))
                    .collect()
            };
        // One object after another, as kubectl does: a missing one does not stop the rest.
        let mut out = Outcome::empty();
        let mut errors = Vec::new();
        for (kind, name) in targets {
            let one = DeleteArgs {
                kind,
                names: name.into_iter().collect(),
                selector: None,
                all: false,
                ..d.clone()
            };
            match self.delete_one(one) {
                Ok(o) => out.extend(o),
                Err(e) => errors.push(e.message),
            }
        }
        if errors.is_empty() {
            return Ok(out);
        }
        let mut e = LabError::msg(errors.join("\n"));
        e.output = out;
        Err(e)
    }

    /// The names of the objects of `kind` (in `ns` when namespaced) whose labels match a
    /// selector; none of a kind the lab does not delete (which says why, by name).
    fn names_matching(
        &self,
        kind: &dyn AnyResource,
        ns: &str,
        selector: &str,
    ) -> Result<Vec<String>, LabError> {
        let query = crate::cluster::label_query::parse(selector).map_err(LabError::msg)?;
        if matches!(kind.delete(), Delete::Refused { .. }) {
            return Ok(Vec::new());
        }
        let sel = Sel {
            query: Some(&query),
            ..Sel::all_in(Some(ns))
        };
        Ok(kind.kept_names(self, &sel))
    }

    /// `delete KIND NAME`: one object.
    fn delete_one(&mut self, d: DeleteArgs) -> Result<Outcome, LabError> {
        match self.delete_route(d)? {
            Route::Command(cmd) => self.dispatch(cmd),
            Route::Volume(name) => self.pv_delete(&name),
        }
    }

    /// What `delete …` does, or why it does nothing.
    fn delete_route(&self, d: DeleteArgs) -> Result<Route, LabError> {
        let Some(kind_word) = d.kind else {
            return Err(LabError::msg(
                "You must provide one or more resources by argument or filename.\nExample: `delete pod web` (kinds: pod, pvc, sc, netpol, vs, nad, ns)",
            ));
        };
        if kind_word.contains(',') {
            return Err(LabError::msg("you must specify only one resource"));
        }
        let kind = resource::resolve(&kind_word)?;
        let Some(name) = d.names.into_iter().next() else {
            return Err(LabError::msg(
                "resource(s) were provided, but no name was specified",
            ));
        };
        route(self, kind, name, d.ns)
    }
}

/// What deleting one object does: the lab's own command for its kind, or `pv_delete`.
pub(super) enum Route {
    /// Run this command (its output and journal entry are the delete's).
    Command(Command),
    /// `Lab::pv_delete` of this volume.
    Volume(String),
}

/// How the lab deletes `name` (in `ns`) of `kind`, or why it does not.
pub(super) fn route(
    lab: &Lab,
    kind: &dyn AnyResource,
    name: String,
    ns: String,
) -> Result<Route, LabError> {
    match kind.delete() {
        Delete::Command(command) => Ok(Route::Command(command(name, ns))),
        Delete::Volume => Ok(Route::Volume(name)),
        Delete::Refused { must_exist, why } => {
            if must_exist && !kind.exists(lab, &ns, &name) {
                return Err(kind.not_found(&name));
            }
            Err(LabError::msg(why(&name)))
        }
    }
}

/// With `--step`, the lab's own command a delete is (`delete pod web --step` is `pod delete
/// web --step`, `delete pvc data --step` is `pvc delete data --step`), or why `--step` does
/// not apply; `None` without `--step`.
pub(crate) fn stepped(d: &DeleteArgs) -> Option<Result<Command, String>> {
    use crate::command::grammar::{PodCmd, PvcCmd};
    if !d.step {
        return None;
    }
    let refuse = || Err(STEP_APPLIES_TO.to_string());
    if d.file.is_some() || d.selector.is_some() || d.all {
        return Some(refuse());
    }
    // `delete pod/web` arrives as kind `pod`, name `web`; a lone `pod/web` is split too.
    let (kind, name) = match (d.kind.as_deref(), d.names.as_slice()) {
        (Some(k), [n]) if !k.contains('/') => (k, n.as_str()),
        (Some(k), []) => match k.split_once('/') {
            Some((k, n)) if !n.is_empty() => (k, n),
            _ => return Some(refuse()),
        },
        _ => return Some(refuse()),
    };
    let (name, ns) = (name.to_string(), d.ns.clone());
    Some(match resource::lookup(kind) {
        Some(crate::cluster::ApiKind::Pod) => Ok(Command::Pod(PodCmd::Delete {
            name,
            ns,
            step: true,
        })),
        Some(crate::cluster::ApiKind::PersistentVolumeClaim) => Ok(Command::Pvc(PvcCmd::Delete {
            name,
            ns,
            step: true,
        })),
        _ => refuse(),
    })
}

/// What `delete … --step` says when it cannot step.
const STEP_APPLIES_TO: &str = "--step steps the CSI calls of one pod or one claim: `delete pod NAME --step` (`pod delete NAME --step`) or `delete pvc NAME --step` (`pvc delete NAME --step`)";
