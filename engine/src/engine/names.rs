//! Names of live objects, for completion in the front ends: `Lab::completion_names(wanted)`
//! answers with the names a learner could type after `get KIND`, `--node`, `cni del`, …
//! (kinds resolved through `crate::resource`), the container IDs in the nodes' libcni
//! result caches, and the words that name a kind.

use super::Lab;
use super::listing::Sel;
use crate::command::complete::Wanted;
use std::collections::BTreeSet;

/// How many names an error lists before it counts the rest.
pub(crate) const LISTED: usize = 3;

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
    /// Sorted, de-duplicated names of what `wanted` asks for. A word that names no kind,
    /// and a kind the lab holds no object of yet, give an empty list.
    pub fn completion_names(&self, wanted: Wanted<'_>) -> Vec<String> {
        let mut out = BTreeSet::new();
        match wanted {
            Wanted::Containers => {
                for rt in self.nodes.values() {
                    out.extend(rt.cache.iter().map(|(_, e)| e.container_id().to_string()));
                }
            }
            Wanted::Kinds => out.extend(crate::resource::completion_words().map(String::from)),
            // The lesson desk's (`Desk::completion_names`).
            Wanted::Lessons => {}
            Wanted::Objects(kind) => {
                out.extend(crate::resource::of(kind).kept_names(self, &Sel::default()))
            }
            Wanted::ObjectsOf(word) => {
                if let Some(kind) = crate::resource::lookup(word) {
                    out.extend(crate::resource::of(kind).kept_names(self, &Sel::default()));
                }
            }
        }
        out.into_iter().collect()
    }
}

impl crate::command::complete::Names for Lab {
    fn names(&self, wanted: Wanted<'_>) -> Vec<String> {
        self.completion_names(wanted)
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
        // A line past MAX_LINE is refused whole, saying how long it is.
        let e = lab.execute(&"z".repeat(10 << 20)).unwrap_err();
        assert!(e.message.len() < 600, "{}", &e.message[..600]);
        assert!(
            e.message
                .contains("10485760 characters: longer than any command"),
            "{}",
            e.message
        );
        // A long word in a line the lab reads is cut in every error.
        let word = "z".repeat(4000);
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
        assert_eq!(
            lab.completion_names(Wanted::ObjectsOf("no")),
            vec!["node-1", "node-2"]
        );
        assert!(lab.completion_names(Wanted::ObjectsOf("pods")).is_empty());
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("cni add c1 --node node-2").unwrap();
        assert_eq!(lab.completion_names(Wanted::ObjectsOf("po")), vec!["web"]);
        let containers = lab.completion_names(Wanted::Containers);
        assert!(containers.contains(&"c1".to_string()), "{containers:?}");
        assert_eq!(
            containers.len(),
            2,
            "the pod's sandbox and c1: {containers:?}"
        );
        assert!(
            lab.completion_names(Wanted::Objects(crate::cluster::ApiKind::Namespace))
                .contains(&"default".to_string())
        );
        assert!(
            lab.completion_names(Wanted::ObjectsOf("widgets"))
                .is_empty()
        );
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
