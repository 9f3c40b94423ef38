//! Names of live objects, for completion in the front ends: `Lab::completion_names(kind)`
//! answers with the names a learner could type after `get KIND`, `--node`, `cni del`, …
//! Kinds are kubectl's plural resource names (as `views::canonical_kind` resolves them),
//! plus `containers` (container IDs in the nodes' libcni result caches) and `kinds`.

use super::Lab;
use std::collections::BTreeSet;

/// The kinds `get`/`describe` accept, as they are best typed (completion candidates).
pub const KINDS: &[&str] = &[
    "nodes",
    "pods",
    "namespaces",
    "networkpolicies",
    "net-attach-def",
    "pvc",
    "pv",
    "sc",
    "va",
    "snapshots",
    "csinodes",
    "csidrivers",
];

/// How many names an error lists before it counts the rest.
pub const LISTED: usize = 3;

/// Names for an error message ("node \"x\" not found; nodes are: …"): all of them when
/// there are a few, else the first [`LISTED`] and how many more ("node-1, node-2, node-3
/// and 997 more"), so a 1,000-node lab does not print 1,000 names. `none` is the text for
/// an empty list.
pub fn few(names: &[String], none: &str) -> String {
    match names.len() {
        0 => none.to_string(),
        n if n <= LISTED + 2 => names.join(", "),
        n => format!("{} and {} more", names[..LISTED].join(", "), n - LISTED),
    }
}

impl Lab {
    /// Sorted, de-duplicated names of the objects of `kind` (any spelling
    /// `canonical_kind` accepts), or of `containers`/`kinds`. Unknown kinds, and kinds the
    /// lab does not hold yet, give an empty list.
    pub fn completion_names(&self, kind: &str) -> Vec<String> {
        let mut out = BTreeSet::new();
        match kind {
            "containers" => {
                for rt in self.nodes.values() {
                    out.extend(rt.cache.keys().map(|(_, id, _)| id.clone()));
                }
            }
            "kinds" => out.extend(KINDS.iter().map(|k| k.to_string())),
            // `pod create --networks`: the NADs a pod can name.
            "networks" => out.extend(
                self.cluster
                    .net_attach_defs
                    .values()
                    .map(|o| o.name().to_string()),
            ),
            _ => match super::views::canonical_kind(kind).unwrap_or("") {
                "nodes" => out.extend(self.cluster.nodes.values().map(|o| o.name().to_string())),
                "pods" => out.extend(self.cluster.pods.values().map(|o| o.name().to_string())),
                "namespaces" => out.extend(
                    self.cluster
                        .namespaces
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                "networkpolicies" => {
                    out.extend(self.cluster.policies.values().map(|o| o.name().to_string()))
                }
                "network-attachment-definitions" => out.extend(
                    self.cluster
                        .net_attach_defs
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                "persistentvolumeclaims" => {
                    out.extend(self.cluster.pvcs.values().map(|o| o.name().to_string()))
                }
                "persistentvolumes" => {
                    out.extend(self.cluster.pvs.values().map(|o| o.name().to_string()))
                }
                "storageclasses" => out.extend(
                    self.cluster
                        .storage_classes
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                "volumesnapshots" => out.extend(
                    self.cluster
                        .snapshots
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                "volumesnapshotcontents" => out.extend(
                    self.cluster
                        .snapshot_contents
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                "volumeattachments" => out.extend(
                    self.cluster
                        .volume_attachments
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                "csinodes" => out.extend(
                    self.cluster
                        .csi_nodes
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                "csidrivers" => out.extend(
                    self.cluster
                        .csi_drivers
                        .values()
                        .map(|o| o.name().to_string()),
                ),
                _ => {}
            },
        }
        out.into_iter().collect()
    }
}

impl crate::command::complete::Names for Lab {
    fn names(&self, kind: &str) -> Vec<String> {
        self.completion_names(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::complete::{Names, complete};

    #[test]
    fn a_node_not_found_on_1000_nodes_lists_three_and_the_count() {
        let mut lab = crate::presets::build("dc-1000", Default::default()).unwrap();
        for line in [
            "pod create w --node nosuch",
            "cni add c1 --node nosuch",
            "show ipam nosuch",
        ] {
            let e = lab.execute(line).unwrap_err();
            assert_eq!(
                e.message,
                "node \"nosuch\" not found; nodes are: node-0001, node-0002, node-0003 and 997 more",
                "{line}"
            );
        }
    }

    #[test]
    fn a_huge_bad_word_is_cut_in_every_error() {
        let mut lab = Lab::new();
        let word = "z".repeat(10 << 20);
        for line in [
            word.clone(),
            format!("pod create {word} --node node-1"),
            format!("get pods {word}"),
            format!("pod create w --node {word}"),
            format!("node list {word}"),
            format!("pvc create d --size {word}"),
        ] {
            let e = lab.execute(&line).unwrap_err();
            assert!(e.message.len() < 600, "{}", &e.message[..600]);
            assert!(e.message.contains('…'), "{}", e.message);
            assert!(e.message.contains(" bytes)"), "{}", e.message);
        }
    }

    #[test]
    fn long_name_lists_show_a_few_and_the_count() {
        let names = |n: usize| (1..=n).map(|i| format!("node-{i}")).collect::<Vec<_>>();
        assert_eq!(few(&[], "(none)"), "(none)");
        assert_eq!(few(&names(2), "-"), "node-1, node-2");
        assert_eq!(
            few(&names(5), "-"),
            "node-1, node-2, node-3, node-4, node-5"
        );
        assert_eq!(
            few(&names(1000), "-"),
            "node-1, node-2, node-3 and 997 more"
        );
    }

    #[test]
    fn names_come_from_live_state() {
        let mut lab = Lab::new();
        assert_eq!(lab.completion_names("no"), vec!["node-1", "node-2"]);
        assert!(lab.completion_names("pods").is_empty());
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("cni add c1 --node node-2").unwrap();
        assert_eq!(lab.completion_names("po"), vec!["web"]);
        let containers = lab.completion_names("containers");
        assert!(containers.contains(&"c1".to_string()), "{containers:?}");
        assert_eq!(
            containers.len(),
            2,
            "the pod's sandbox and c1: {containers:?}"
        );
        assert!(
            lab.completion_names("namespaces")
                .contains(&"default".to_string())
        );
        assert!(lab.completion_names("widgets").is_empty());
    }

    fn cands(line: &str, names: &dyn Names) -> Vec<String> {
        complete(line, line.len(), names).candidates
    }

    #[test]
    fn live_names_come_from_the_lab() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("pod create db --node node-2").unwrap();
        lab.execute("cni add c1 --node node-1").unwrap();
        assert_eq!(
            cands("pod create x --node ", &lab),
            vec!["node-1", "node-2"]
        );
        assert_eq!(cands("pod create x --node node-2", &lab), vec!["node-2"]);
        assert_eq!(cands("pod delete ", &lab), vec!["db", "web"]);
        assert_eq!(cands("po rm w", &lab), vec!["web"]);
        assert_eq!(cands("reach web ", &lab), vec!["db", "web"]);
        assert_eq!(cands("get pods ", &lab), vec!["db", "web"]);
        assert_eq!(cands("describe no ", &lab), vec!["node-1", "node-2"]);
        assert!(cands("get ", &lab).contains(&"networkpolicies".to_string()));
        assert_eq!(cands("cni del c1", &lab), vec!["c1"]);
        assert_eq!(
            cands("cni del ", &lab).len(),
            3,
            "c1 and the sandboxes of web and db"
        );
        assert_eq!(cands("show ipam ", &lab), vec!["node-1", "node-2"]);
        assert!(cands("pod list -n ", &lab).contains(&"default".to_string()));
        // A new name has no candidates.
        assert!(cands("pod create ", &lab).is_empty());
        assert!(cands("explain ve", &lab) == vec!["veth"]);
        assert_eq!(cands("help pod c", &lab), vec!["create"]);
        assert!(complete("cni conf load ", 14, &lab).wants_path);
    }

    /// Every flag and argument that names a storage object completes that kind's names.
    #[test]
    fn storage_names_complete() {
        let mut lab = Lab::new();
        for l in [
            "pvc create data --size 1Gi",
            "pvc create logs --size 1Gi",
            "snapshot create snap-1 --pvc data",
        ] {
            lab.execute(l).unwrap();
        }
        let c = |line: &str| complete(line, line.len(), &lab).candidates;
        assert_eq!(c("pod create web --node node-1 --pvc "), ["data", "logs"]);
        assert_eq!(c("pod create web --pvc d"), ["data"]);
        assert_eq!(c("pvc delete l"), ["logs"]);
        assert_eq!(
            c("pvc create copy --size 1Gi --from-pvc "),
            ["data", "logs"]
        );
        assert_eq!(c("pvc create r --size 1Gi --from-snapshot "), ["snap-1"]);
        assert!(c("pvc create r --size 1Gi --class ").contains(&"standard".to_string()));
        assert_eq!(c("snapshot delete s"), ["snap-1"]);
        assert_eq!(c("get pvc "), ["data", "logs"]);
        assert_eq!(c("describe pv ").len(), 2);
    }
}
