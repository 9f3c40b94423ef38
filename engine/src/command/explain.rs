//! `explain TOPIC`: short concept cards. Each card is a Markdown file under
//! `assets/explain/` (embedded here), so the book can include the same text. A card starts
//! with `# id: title`, then header lines (`Handbook: …` naming the chapter and section it
//! follows, `Aliases: …`), a blank line, and the body.

use super::help::{quoted_choice, suggest};
use crate::render::{Line, Outcome, Role};

/// Every card, in the order `explain` lists them (roughly the order of the chapters).
pub(crate) const CARDS: &[(&str, &str)] = &[
    ("netns", include_str!("../../../assets/explain/netns.md")),
    ("veth", include_str!("../../../assets/explain/veth.md")),
    ("bridge", include_str!("../../../assets/explain/bridge.md")),
    (
        "host-local",
        include_str!("../../../assets/explain/host-local.md"),
    ),
    (
        "conflist",
        include_str!("../../../assets/explain/conflist.md"),
    ),
    (
        "prevresult",
        include_str!("../../../assets/explain/prevresult.md"),
    ),
    (
        "capabilities",
        include_str!("../../../assets/explain/capabilities.md"),
    ),
    (
        "cni-args",
        include_str!("../../../assets/explain/cni-args.md"),
    ),
    (
        "idempotency",
        include_str!("../../../assets/explain/idempotency.md"),
    ),
    ("gc", include_str!("../../../assets/explain/gc.md")),
    (
        "host-gw",
        include_str!("../../../assets/explain/host-gw.md"),
    ),
    ("vxlan", include_str!("../../../assets/explain/vxlan.md")),
    ("bgp", include_str!("../../../assets/explain/bgp.md")),
    ("felix", include_str!("../../../assets/explain/felix.md")),
    ("ebpf", include_str!("../../../assets/explain/ebpf.md")),
    (
        "masquerade",
        include_str!("../../../assets/explain/masquerade.md"),
    ),
    ("mtu", include_str!("../../../assets/explain/mtu.md")),
    ("multus", include_str!("../../../assets/explain/multus.md")),
    (
        "macvlan",
        include_str!("../../../assets/explain/macvlan.md"),
    ),
    ("sriov", include_str!("../../../assets/explain/sriov.md")),
    (
        "networkpolicy",
        include_str!("../../../assets/explain/networkpolicy.md"),
    ),
    (
        "csi-lifecycle",
        include_str!("../../../assets/explain/csi-lifecycle.md"),
    ),
    (
        "access-modes",
        include_str!("../../../assets/explain/access-modes.md"),
    ),
    ("wffc", include_str!("../../../assets/explain/wffc.md")),
    (
        "volumeattachment",
        include_str!("../../../assets/explain/volumeattachment.md"),
    ),
];

/// A parsed card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The topic's id (the file name).
    pub id: &'static str,
    /// The title after `# id: `.
    pub title: String,
    /// The `Handbook:` line (chapter and section).
    pub handbook: String,
    /// Other spellings accepted by `explain`.
    pub aliases: Vec<String>,
    /// The body text.
    pub body: String,
}

impl Card {
    /// Parse a card file (lenient: missing headers give empty fields).
    pub fn parse(id: &'static str, text: &str) -> Card {
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("");
        let title = first
            .trim_start_matches('#')
            .trim()
            .split_once(": ")
            .map(|(_, t)| t.to_string())
            .unwrap_or_else(|| first.trim_start_matches('#').trim().to_string());
        let mut handbook = String::new();
        let mut aliases = Vec::new();
        let mut body = String::new();
        let mut in_header = true;
        for l in lines {
            if in_header {
                if l.trim().is_empty() {
                    in_header = false;
                } else if let Some(h) = l.strip_prefix("Handbook: ") {
                    handbook = h.to_string();
                } else if let Some(a) = l.strip_prefix("Aliases: ") {
                    aliases = a
                        .split(',')
                        .map(|s| s.trim().to_ascii_lowercase())
                        .collect();
                }
                continue;
            }
            body.push_str(l);
            body.push('\n');
        }
        Card {
            id,
            title,
            handbook,
            aliases,
            body: body.trim_end().to_string(),
        }
    }
}

/// Every card, parsed.
pub fn cards() -> Vec<Card> {
    CARDS.iter().map(|(id, t)| Card::parse(id, t)).collect()
}

/// Topic ids and their aliases (for completion).
pub(crate) fn topic_names() -> Vec<String> {
    cards().into_iter().map(|c| c.id.to_string()).collect()
}

/// The card for a topic, by id or alias, case-insensitively (`prevResult`, `CNI_ARGS`).
pub fn find(topic: &str) -> Option<Card> {
    let t = topic.to_ascii_lowercase().replace('_', "-");
    let raw = topic.to_ascii_lowercase();
    cards()
        .into_iter()
        .find(|c| c.id == t || c.aliases.iter().any(|a| *a == t || *a == raw))
}

/// `explain [TOPIC]`: the list of topics, or one card; an unknown topic is an error that
/// suggests the nearest topics.
pub fn explain(topic: Option<&str>) -> Result<Outcome, String> {
    let Some(topic) = topic else {
        return Ok(list());
    };
    let Some(card) = find(topic) else {
        let mut spellings = Vec::new();
        for c in cards() {
            spellings.push((c.id.to_string(), c.id.to_string()));
            for a in &c.aliases {
                spellings.push((a.clone(), c.id.to_string()));
            }
        }
        let sugg = suggest(topic, &spellings);
        let mut msg = format!("no card for {topic:?}");
        if !sugg.is_empty() {
            msg.push_str(&format!("; did you mean {}?", quoted_choice(&sugg)));
        }
        msg.push_str(&format!("\ntopics: {}", topic_names().join(", ")));
        return Err(msg);
    };
    let mut out = Outcome::empty();
    out.line(
        Line::new()
            .push(card.id, Role::Header)
            .push(format!(": {}", card.title), Role::Header),
    );
    if !card.handbook.is_empty() {
        out.line(Line::styled(
            format!("Handbook: {}", card.handbook),
            Role::Dim,
        ));
    }
    out.plain("");
    for l in card.body.lines() {
        if let Some(rest) = l.strip_prefix("Try: ") {
            out.line(
                Line::new()
                    .push("Try: ", Role::Header)
                    .push(rest, Role::Plain),
            );
        } else {
            out.plain(l);
        }
    }
    Ok(out)
}

fn list() -> Outcome {
    let cards = cards();
    let width = cards.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut out = Outcome::empty();
    out.line(Line::styled("Topics (explain TOPIC):", Role::Header));
    for c in &cards {
        out.line(
            Line::new()
                .push(format!("  {:<width$}", c.id), Role::Name)
                .push(format!("  {}", c.title), Role::Plain),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_has_a_title_a_chapter_and_a_body() {
        for c in cards() {
            assert!(!c.title.is_empty(), "{}", c.id);
            assert!(c.handbook.contains("chapter"), "{}: {}", c.id, c.handbook);
            assert!(c.body.lines().count() >= 5, "{}", c.id);
            let first = CARDS
                .iter()
                .find(|(id, _)| *id == c.id)
                .map(|(_, t)| t.lines().next().unwrap_or(""))
                .unwrap_or("");
            assert!(first.starts_with(&format!("# {}: ", c.id)) || first.starts_with("# "));
        }
    }

    #[test]
    fn topics_resolve_by_alias_and_case() {
        assert_eq!(find("prevResult").map(|c| c.id), Some("prevresult"));
        assert_eq!(find("CNI_ARGS").map(|c| c.id), Some("cni-args"));
        assert_eq!(find("runtimeConfig").map(|c| c.id), Some("capabilities"));
        assert_eq!(find("WaitForFirstConsumer").map(|c| c.id), Some("wffc"));
        assert!(find("nothing").is_none());
    }

    #[test]
    fn unknown_topics_suggest() {
        let err = explain(Some("vet")).unwrap_err();
        assert!(
            err.starts_with("no card for \"vet\"; did you mean \"veth\"?"),
            "{err}"
        );
    }

    #[test]
    fn commands_the_cards_suggest_parse() {
        let mut n = 0;
        for c in cards() {
            let Some((_, tail)) = c.body.split_once("Try: ") else {
                panic!("{}: no Try: line", c.id);
            };
            for (i, snippet) in tail.split('`').enumerate() {
                let first = snippet.split_whitespace().next().unwrap_or("");
                let placeholder = snippet.chars().any(|ch| ch.is_ascii_uppercase())
                    && !snippet.contains("IgnoreUnknown");
                if i % 2 == 1
                    && super::super::help::find_sub(super::super::help::tree(), first).is_some()
                    && !placeholder
                {
                    assert!(
                        matches!(super::super::parse(snippet), Ok(Some(_))),
                        "{}: `{snippet}` does not parse",
                        c.id
                    );
                    n += 1;
                }
            }
        }
        assert!(n > 10, "{n}");
    }

    #[test]
    fn aliases_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for c in cards() {
            assert!(seen.insert(c.id.to_string()), "{}", c.id);
            for a in c.aliases {
                assert!(seen.insert(a.clone()), "alias {a} used twice");
            }
        }
    }
}
