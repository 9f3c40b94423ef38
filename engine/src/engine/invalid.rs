//! The API server's Invalid error (`apierrors.NewInvalid`) as a value, and the two ways it
//! reads: the status message the server sends, and what kubectl's `checkErr` prints of it.
//!
//! `NewInvalid(qualifiedKind, name, errs)` (apimachinery `pkg/api/errors`) sends
//! `Message: fmt.Sprintf("%s %q is invalid: %v", qualifiedKind.String(), name, errs.ToAggregate())`
//! (the kind with its group, `NetworkPolicy.networking.k8s.io`; one error as itself,
//! several as `[e1, e2]`) and `Details{Group, Kind: qualifiedKind.Kind, Name, Causes}`, a
//! cause per field error. kubectl's `checkErr` (`pkg/cmd/util/helpers.go`), for a single
//! error whose reason is Invalid, prints from the details, not the message:
//!
//! ```go
//! s = fmt.Sprintf("The %s %q is invalid", details.Kind, details.Name)
//! ...
//! errs := statusCausesToAggrError(details.Causes)   // "field: message", duplicates once
//! handleErr(MultilineError(s+": ", errs), DefaultErrorExitCode)
//! ```
//!
//! `MultilineError` prints one cause after the prefix, several one a line as `* cause`
//! under it. `apply` keeps the error typed (`AddSourceToErr` only prefixes the status
//! message), so one refused object reads the same; several are an aggregate, each printed
//! by `StandardErrorMessage` as `Error from server (Invalid): <message>`.

use super::{LabError, Reason};
use crate::cluster::ApiKind;

/// An object the API server's validation refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    /// Its kind.
    pub kind: ApiKind,
    /// Its name.
    pub name: String,
    /// Each field error as `field: body` (`spec.resources[storage]: Invalid value: "0":
    /// must be greater than zero`), in the order validation found them.
    pub causes: Vec<String>,
}

impl Invalid {
    /// One field error.
    pub(crate) fn one(kind: ApiKind, name: &str, cause: impl Into<String>) -> Self {
        Invalid {
            kind,
            name: name.to_string(),
            causes: vec![cause.into()],
        }
    }

    /// The causes, each once (`statusCausesToAggrError` skips a repeated message; the
    /// server's aggregate does too).
    fn distinct(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for c in &self.causes {
            if !seen.contains(&c.as_str()) {
                seen.push(c);
            }
        }
        seen
    }

    /// The server's status message: `PersistentVolumeClaim "d0" is invalid: …`,
    /// `NetworkPolicy.networking.k8s.io "np" is invalid: [e1, e2]`.
    pub(crate) fn status_message(&self) -> String {
        let r = crate::resource::of(self.kind);
        let qualified = match r.group() {
            "" => self.kind.name().to_string(),
            group => format!("{}.{group}", self.kind.name()),
        };
        let causes = self.distinct();
        let agg = match causes.as_slice() {
            [one] => one.to_string(),
            many => format!("[{}]", many.join(", ")),
        };
        format!("{qualified} {:?} is invalid: {agg}", self.name)
    }

    /// What kubectl's checkErr prints: `The PersistentVolumeClaim "d0" is invalid: …`, or
    /// with several causes the prefix alone (`MultilineError`'s `fmt.Fprintln(buf, prefix)`
    /// keeps its trailing space) and `* cause` lines.
    pub(crate) fn kubectl_message(&self) -> String {
        let prefix = format!("The {} {:?} is invalid: ", self.kind.name(), self.name);
        match self.distinct().as_slice() {
            [one] => format!("{prefix}{one}"),
            many => {
                let lines: Vec<String> = many.iter().map(|c| format!("* {c}")).collect();
                format!("{prefix}\n{}", lines.join("\n"))
            }
        }
    }
}

impl From<crate::net::validate::PolicyInvalid> for Invalid {
    fn from(e: crate::net::validate::PolicyInvalid) -> Self {
        Invalid {
            kind: ApiKind::NetworkPolicy,
            causes: e.errors.iter().map(ToString::to_string).collect(),
            name: e.name,
        }
    }
}

impl From<Invalid> for LabError {
    fn from(e: Invalid) -> Self {
        let mut err = LabError::msg(e.kubectl_message()).because(Reason::Api("Invalid"));
        err.invalid = Some(Box::new(e));
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fails(lab: &mut crate::engine::Lab, line: &str) -> String {
        match lab.execute(line) {
            Ok(o) => panic!("{line}: succeeded: {}", o.to_text()),
            Err(e) => e.message,
        }
    }

    const PVC0: &str = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: d0\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 0\n";
    const NP: &str = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: np\nspec:\n  podSelector: {}\n  ingress:\n  - ports:\n    - port: 80\n      endPort: 70\n";
    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: P4\nspec:\n  containers:\n  - name: app\n    image: nginx\n";

    /// One refused object: kubectl's checkErr line, from the error's details
    /// (`The <Kind> "<name>" is invalid: <field>: <body>`), no source or line.
    #[test]
    fn apply_prints_one_invalid_object_as_check_err_does() {
        let mut lab = crate::engine::Lab::new();
        let apply = |doc: &str| format!("apply -f - <<EOF\n{doc}EOF");
        assert_eq!(
            fails(&mut lab, &apply(PVC0)),
            "The PersistentVolumeClaim \"d0\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero"
        );
        assert_eq!(
            fails(&mut lab, &apply(NP)),
            "The NetworkPolicy \"np\" is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`"
        );
        let pod = "The Pod \"P4\" is invalid: metadata.name: Invalid value: \"P4\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        assert_eq!(fails(&mut lab, &apply(POD)), pod);
        // The lab's create command is the API server's create too.
        assert_eq!(fails(&mut lab, "pod create P4"), pod);
        // Several: an aggregate, each as StandardErrorMessage prints it.
        let both = fails(&mut lab, &apply(&format!("{PVC0}---\n{NP}")));
        assert_eq!(
            both,
            "Error from server (Invalid): error when creating \"STDIN\": PersistentVolumeClaim \"d0\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero\nError from server (Invalid): error when creating \"STDIN\": NetworkPolicy.networking.k8s.io \"np\" is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`"
        );
    }

    /// The other kinds' validation errors are the same typed error: a StorageClass, a
    /// PersistentVolume, a VolumeSnapshot, a claim update, a NetworkAttachmentDefinition,
    /// and the lab's create commands, which are the API server's create too.
    #[test]
    fn every_kind_refused_reads_as_kubectl_prints_it() {
        let mut lab = crate::engine::Lab::new();
        let apply = |doc: &str| format!("apply -f - <<EOF\n{doc}EOF");
        for (doc, want) in [
            (
                "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc1}\nprovisioner: \"\"\n",
                "The StorageClass \"sc1\" is invalid: provisioner: Required value",
            ),
            (
                "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\nspec: {accessModes: [ReadWriteOnce]}\n",
                "The PersistentVolume \"pv1\" is invalid: spec.capacity: Required value",
            ),
            (
                "apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata: {name: s1}\nspec: {source: {}}\n",
                "The VolumeSnapshot \"s1\" is invalid: spec.source: Invalid value: \"object\": Exactly one of volumeSnapshotContentName and persistentVolumeClaimName should be specified",
            ),
        ] {
            assert_eq!(fails(&mut lab, &apply(doc)), want);
        }
        assert_eq!(
            fails(&mut lab, "sc create s2 --provisioner ''"),
            "The StorageClass \"s2\" is invalid: provisioner: Required value"
        );
        assert_eq!(
            fails(&mut lab, "pvc create d --size 0"),
            "The PersistentVolumeClaim \"d\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero"
        );
        assert_eq!(
            fails(&mut lab, "pod create w --pvc a --pvc a"),
            "The Pod \"w\" is invalid: spec.volumes[1].name: Duplicate value: \"a\""
        );
    }

    /// A container's resources as `ValidateResourceRequirements` checks them: a request
    /// over its limit, a negative value, an unknown name, an extended resource's request
    /// other than its limit, all reported at once.
    #[test]
    fn a_pods_resources_are_checked_as_the_api_server_checks_them() {
        let mut lab = crate::engine::Lab::new();
        let pod = |name: &str, resources: &str| {
            format!(
                "apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{containers: [{{name: app, image: nginx, resources: {resources}}}]}}\nEOF"
            )
        };
        assert_eq!(
            fails(
                &mut lab,
                &pod("p1", "{limits: {cpu: \"1\"}, requests: {cpu: \"2\"}}")
            ),
            "The Pod \"p1\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"
        );
        assert_eq!(
            fails(&mut lab, &pod("p2", "{requests: {cpu: \"-1\"}}")),
            "The Pod \"p2\" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"
        );
        assert_eq!(
            fails(&mut lab, &pod("p3", "{requests: {foo: \"1\"}}")),
            "The Pod \"p3\" is invalid: \n* spec.containers[0].resources.requests[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified\n* spec.containers[0].resources.requests[foo]: Invalid value: \"foo\": must be a standard resource for containers"
        );
        assert_eq!(
            fails(
                &mut lab,
                &pod(
                    "p4",
                    "{limits: {example.com/gpu: \"2\"}, requests: {example.com/gpu: \"1\"}}"
                )
            ),
            "The Pod \"p4\" is invalid: spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to example.com/gpu limit of 2"
        );
        // Within its limit (500m is less than 1): created, and a limit alone is the
        // request too, as the API server's defaulting makes it.
        lab.execute(&pod(
            "ok",
            "{limits: {cpu: \"1\", memory: 1Gi}, requests: {cpu: 500m}}",
        ))
        .expect("created");
        let p = lab
            .cluster()
            .pods
            .get(&("default".into(), "ok".into()))
            .expect("ok");
        let r = p.spec.containers[0].resources();
        assert_eq!(r.requests.get("cpu").map(String::as_str), Some("500m"));
        assert_eq!(r.requests.get("memory").map(String::as_str), Some("1Gi"));
        assert_eq!(lab.counts().1, 1, "no refused pod was created");
    }

    #[test]
    fn reads_as_the_server_sends_it_and_as_kubectl_prints_it() {
        let e = Invalid::one(
            ApiKind::PersistentVolumeClaim,
            "d0",
            "spec.resources[storage]: Invalid value: \"0\": must be greater than zero",
        );
        assert_eq!(
            e.status_message(),
            "PersistentVolumeClaim \"d0\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero"
        );
        assert_eq!(
            e.kubectl_message(),
            "The PersistentVolumeClaim \"d0\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero"
        );
        let e = Invalid {
            kind: ApiKind::NetworkPolicy,
            name: "np".into(),
            causes: vec!["a: x".into(), "b: y".into(), "a: x".into()],
        };
        assert_eq!(
            e.status_message(),
            "NetworkPolicy.networking.k8s.io \"np\" is invalid: [a: x, b: y]"
        );
        assert_eq!(
            e.kubectl_message(),
            "The NetworkPolicy \"np\" is invalid: \n* a: x\n* b: y"
        );
    }
}
