//! Facts a lesson names by what they are, not by their value: `{pod web ip}` in a predict
//! quiz's answer (or in the text playback shows) is filled from the lab after the quiz's
//! command ran. A learner whose history differs (one more pod, a retried step) gets the
//! address their own cluster gave, so no answer depends on numbering a learner can shift.
//!
//! Forms: `{pod NAME ip}` (the pod's IP from its status), `{pod NAME interface IF ip}` (the
//! address on that interface in the pod's namespace, without the prefix length),
//! `{lease CONTAINER on NODE}` (the address host-local leased to that container ID on the
//! node, in any network).

use super::check::{ipam_dirs, pod, pod_link};
use crate::engine::Lab;

/// The forms, for error messages and the authoring docs.
pub(crate) const FORMS: &[&str] = &[
    "{pod NAME ip}",
    "{pod NAME interface IF ip}",
    "{lease CONTAINER on NODE}",
];

/// A fact a lesson names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fact {
    /// A pod's IP.
    PodIp(String),
    /// The address of a pod's interface.
    InterfaceIp(String, String),
    /// The address host-local leased to a container ID on a node.
    Lease(String, String),
}

impl Fact {
    /// `text` as a fact (`{…}` included), `None` if it is not written as one; `Some(Err)`
    /// names a malformed one.
    pub fn parse(text: &str) -> Option<Result<Fact, String>> {
        let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
        let words: Vec<&str> = inner.split_whitespace().collect();
        Some(match words.as_slice() {
            ["pod", name, "ip"] => Ok(Fact::PodIp((*name).into())),
            ["pod", name, "interface", ifname, "ip"] => {
                Ok(Fact::InterfaceIp((*name).into(), (*ifname).into()))
            }
            ["lease", id, "on", node] => Ok(Fact::Lease((*id).into(), (*node).into())),
            _ => Err(format!(
                "unknown fact `{}`: expected one of {}",
                text.trim(),
                FORMS.join(", ")
            )),
        })
    }

    /// The fact's value in this lab, or what is there instead.
    pub fn value(&self, lab: &Lab) -> Result<String, String> {
        match self {
            Fact::PodIp(name) => {
                let p = pod(lab, name).map_err(|e| e.actual)?;
                match p.ip {
                    None => Err(format!("pod {} has no IP yet", p.key)),
                    Some(ip) => Ok(ip.to_string()),
                }
            }
            Fact::InterfaceIp(name, ifname) => {
                let p = pod(lab, name).map_err(|e| e.actual)?;
                let link = pod_link(lab, &p, ifname).map_err(|e| e.actual)?;
                link.addrs
                    .first()
                    .map(|a| a.addr().to_string())
                    .ok_or_else(|| format!("pod {} {ifname} has no address", p.key))
            }
            Fact::Lease(id, node) => {
                let dirs = ipam_dirs(lab, node).map_err(|e| e.actual)?;
                dirs.values()
                    .flat_map(|d| d.leases_from(0))
                    .find(|lease| lease.container_id == *id)
                    .map(|lease| lease.ip.to_string())
                    .ok_or_else(|| format!("host-local on {node} holds no lease for {id}"))
            }
        }
    }
}

/// A quiz answer as the learner's lab has it: a fact filled in, any other text as written.
pub fn answer_in(lab: &Lab, answer: &str) -> String {
    match Fact::parse(answer) {
        Some(Ok(fact)) => fact.value(lab).unwrap_or_else(|e| format!("({e})")),
        _ => answer.to_string(),
    }
}

/// Text with every `{…}` that is a fact replaced by its value; other braces stay.
pub fn fill(lab: &Lab, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        match after.find('}') {
            Some(close) => {
                let candidate = &after[..=close];
                match Fact::parse(candidate) {
                    Some(Ok(_)) => out.push_str(&answer_in(lab, candidate)),
                    _ => out.push_str(candidate),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_parse_and_name_what_is_wrong() {
        assert_eq!(
            Fact::parse("{pod web ip}"),
            Some(Ok(Fact::PodIp("web".into())))
        );
        assert_eq!(
            Fact::parse(" {lease c3 on node-1} "),
            Some(Ok(Fact::Lease("c3".into(), "node-1".into())))
        );
        assert_eq!(Fact::parse("10.244.1.3"), None);
        let e = Fact::parse("{pod web mac}").unwrap().unwrap_err();
        assert!(e.contains("unknown fact `{pod web mac}`"), "{e}");
        assert!(e.contains("{pod NAME ip}"), "{e}");
    }

    #[test]
    fn facts_are_filled_from_the_lab() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("cni add c3 --node node-2").unwrap();
        assert_eq!(answer_in(&lab, "{pod web ip}"), "10.244.1.2");
        assert_eq!(answer_in(&lab, "{pod web interface eth0 ip}"), "10.244.1.2");
        assert_eq!(answer_in(&lab, "{lease c3 on node-2}"), "10.244.2.2");
        assert_eq!(
            answer_in(&lab, "{pod db ip}"),
            "(there is no pod default/db)"
        );
        assert_eq!(
            fill(
                &lab,
                "Answer: {pod web ip}. JSON {\"a\": 1} stays; {lease c3 on node-2}."
            ),
            "Answer: 10.244.1.2. JSON {\"a\": 1} stays; 10.244.2.2."
        );
    }
}
