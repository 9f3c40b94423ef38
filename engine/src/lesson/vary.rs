//! Variants: one lesson, different names, addresses, ports and fault sites per student, so
//! a class cannot hand in one answer (as Packet Tracer's activity variables do).
//!
//! A lesson declares its variables once, in its ```lesson block, as groups of names that
//! take their values together, one row of choices per group:
//!
//! ```text
//! vary: pod = web | shop | cart
//! vary: node other net = node-1 node-2 10.244.1 | node-2 node-1 10.244.2
//! ```
//!
//! Everywhere else in the file (teaching text, tasks, reference commands, checks, hints,
//! quizzes) `${pod}` stands for the value; `$${` is a literal `${`. Variant `N` picks one
//! row of every group ([`Vary::values`]): variant 0 takes the first row of each, which is
//! the lesson as written; the others are a fixed permutation of every combination, so two
//! variant numbers below [`Vary::count`] never give the same lesson. Substitution is on the
//! file's text before it is parsed (line numbers unchanged), so every check is parsed from
//! the variant's own words and stays typed; nothing a learner's command prints is touched.
//!
//! A variant also shows each choice quiz's options in an order of its own
//! ([`option_order`]), relabelled A, B, … as shown, so a class cannot share "B, C, B"
//! either; variant 0 keeps the order as written.

use super::parse::LessonError;
use sha2::{Digest, Sha256};

/// The key that declares a group in the ```lesson block.
pub const KEY: &str = "vary";

/// One group of variables that take their values together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The line that declares it.
    pub line: usize,
    /// The variables' names, in order.
    pub names: Vec<String>,
    /// The rows of values (one value per name); the first is variant 0's.
    pub rows: Vec<Vec<String>>,
}

/// The variables a lesson declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vary {
    /// The groups, in the order declared.
    pub groups: Vec<Group>,
}

/// Whether a variable name is well formed: a letter, then letters, digits or `_`.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Vary {
    /// Read one `vary: NAMES = ROW | ROW …` value (the part after `vary:`) on `line`.
    pub fn declare(&mut self, file: &str, line: usize, value: &str) -> Result<(), LessonError> {
        let err = |r: String| LessonError::new(file, line, r);
        let form = "`vary: NAME … = VALUE … | VALUE … | …` (one value per name in each choice)";
        let Some((names, rows)) = value.split_once('=') else {
            return Err(err(format!("a `vary:` line reads {form}, got `{value}`")));
        };
        let names: Vec<String> = names.split_whitespace().map(str::to_string).collect();
        if names.is_empty() {
            return Err(err(format!(
                "this `vary:` names no variable; it reads {form}"
            )));
        }
        for n in &names {
            if !is_name(n) {
                return Err(err(format!(
                    "`{n}` is not a variable name (a letter, then letters, digits or `_`)"
                )));
            }
            if self.groups.iter().flat_map(|g| &g.names).any(|m| m == n) || {
                names.iter().filter(|m| *m == n).count() > 1
            } {
                return Err(err(format!("the variable `{n}` is declared twice")));
            }
        }
        let mut parsed: Vec<Vec<String>> = Vec::new();
        for (i, row) in rows.split('|').enumerate() {
            let values: Vec<String> = row.split_whitespace().map(str::to_string).collect();
            if values.len() != names.len() {
                return Err(err(format!(
                    "choice {} of `{}` has {} value{} for {} name{}: {form}",
                    i + 1,
                    names.join(" "),
                    values.len(),
                    if values.len() == 1 { "" } else { "s" },
                    names.len(),
                    if names.len() == 1 { "" } else { "s" },
                )));
            }
            if values.iter().any(|v| v.contains("${")) {
                return Err(err(format!(
                    "choice {} of `{}` uses a variable; values are written out",
                    i + 1,
                    names.join(" ")
                )));
            }
            if parsed.contains(&values) {
                return Err(err(format!(
                    "choice {} of `{}` repeats an earlier one ({})",
                    i + 1,
                    names.join(" "),
                    values.join(" ")
                )));
            }
            parsed.push(values);
        }
        if parsed.len() < 2 {
            return Err(err(format!(
                "`{}` has one choice: a variable needs at least two (the first is variant 0's)",
                names.join(" ")
            )));
        }
        self.groups.push(Group {
            line,
            names,
            rows: parsed,
        });
        Ok(())
    }

    /// How many different variants there are (every combination of one row per group; 1
    /// when nothing varies), at most `u32::MAX`.
    pub fn count(&self) -> u32 {
        let n = self
            .groups
            .iter()
            .fold(1u64, |acc, g| acc.saturating_mul(g.rows.len() as u64));
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Which row of each group variant `variant` takes, or why there is no such variant.
    /// Variant 0 takes every first row; the others are the combinations in a fixed order
    /// that changes many groups from one number to the next (a stride through them near
    /// the golden ratio, coprime with their number, so it reaches each once).
    pub fn rows(&self, variant: u32) -> Result<Vec<usize>, String> {
        let count = self.count();
        if variant >= count {
            return Err(if count == 1 {
                "this lesson has no variants (its ```lesson block declares no `vary:`), so --variant takes only 0".to_string()
            } else {
                format!(
                    "this lesson has {count} variants, so --variant takes 0 to {} (0 is the lesson as written)",
                    count - 1
                )
            });
        }
        let mut index = u64::from(variant);
        if index > 0 {
            let others = u64::from(count) - 1;
            index = 1 + ((index - 1) * stride(others)) % others;
        }
        // Mixed radix, the first group changing fastest.
        let mut rows = Vec::with_capacity(self.groups.len());
        for g in &self.groups {
            let n = g.rows.len() as u64;
            rows.push(usize::try_from(index % n).unwrap_or(0));
            index /= n;
        }
        Ok(rows)
    }

    /// The variant that takes these rows (one per group, each below its group's count).
    pub fn variant_of(&self, rows: &[usize]) -> u32 {
        let mut index: u64 = 0;
        for (g, r) in self.groups.iter().zip(rows).rev() {
            index = index * g.rows.len() as u64 + *r as u64;
        }
        if index == 0 {
            return 0;
        }
        // Undo the stride: (variant - 1) = (index - 1) × stride⁻¹ (mod count - 1).
        let others = u64::from(self.count()) - 1;
        let back = (u128::from(index - 1) * u128::from(inverse(stride(others), others)))
            % u128::from(others);
        u32::try_from(back + 1).unwrap_or(0)
    }

    /// Variants that between them give every variable each of its values (besides
    /// variant 0): the k-th takes row k of every group (wrapping in shorter groups). What
    /// `lesson lint` plays, so every value is tried in the lab.
    pub fn covering(&self) -> Vec<u32> {
        let most = self.groups.iter().map(|g| g.rows.len()).max().unwrap_or(1);
        (1..most)
            .map(|k| {
                let rows: Vec<usize> = self.groups.iter().map(|g| k % g.rows.len()).collect();
                self.variant_of(&rows)
            })
            .collect()
    }

    /// Each variable's value in variant `variant`, as (name, value).
    pub fn values(&self, variant: u32) -> Result<Vec<(String, String)>, String> {
        let rows = self.rows(variant)?;
        Ok(self
            .groups
            .iter()
            .zip(rows)
            .flat_map(|(g, r)| g.names.iter().cloned().zip(g.rows[r].iter().cloned()))
            .collect())
    }
}

/// A step through `0..n` that visits every number once: the number nearest `n` times the
/// golden ratio's fraction that is coprime with `n`.
fn stride(n: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    if n <= 2 {
        return 1;
    }
    let start = (n * 618) / 1000;
    (start..n)
        .chain(1..start)
        .find(|s| *s > 0 && gcd(*s, n) == 1)
        .unwrap_or(1)
}

/// The inverse of `a` modulo `n` (`a` coprime with `n`; 0 when `n` is 1).
fn inverse(a: u64, n: u64) -> u64 {
    let (mut t, mut new_t, mut r, mut new_r) = (0i128, 1i128, i128::from(n), i128::from(a));
    while new_r != 0 {
        let q = r / new_r;
        (t, new_t) = (new_t, t - q * new_t);
        (r, new_r) = (new_r, r - q * new_r);
    }
    u64::try_from(t.rem_euclid(i128::from(n).max(1))).unwrap_or(0)
}

/// The order in which variant `variant` of lesson `lesson` shows quiz `quiz`'s `count`
/// options: for each position, the index of the option as written. Variant 0 keeps the
/// written order; any other takes the permutation picked by the SHA-256 of (lesson id,
/// variant, quiz index), drawn as a Fisher–Yates shuffle whose choices are the digits of
/// the digest's first 128 bits, so it is the same on every machine and every run.
pub fn option_order(lesson: &str, variant: u32, quiz: usize, count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    if variant == 0 {
        return order;
    }
    let digest = Sha256::new()
        .chain_update(lesson.as_bytes())
        .chain_update([0])
        .chain_update(variant.to_le_bytes())
        .chain_update((quiz as u64).to_le_bytes())
        .finalize();
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    let mut draw = u128::from_le_bytes(first);
    for i in (1..count).rev() {
        let choices = i as u128 + 1;
        order.swap(i, (draw % choices) as usize);
        draw /= choices;
    }
    order
}

/// `line` with every `${name}` replaced by its value (`$${` is a literal `${`); an
/// unknown or unclosed one is an error naming the line and the declared names.
pub fn substitute(
    file: &str,
    number: usize,
    line: &str,
    values: &[(String, String)],
) -> Result<String, LessonError> {
    if !line.contains("${") {
        return Ok(line.to_string());
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("${") {
        if rest[..at].ends_with('$') {
            // `$${`: a literal `${`.
            out.push_str(&rest[..at - 1]);
            out.push_str("${");
            rest = &rest[at + 2..];
            continue;
        }
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(LessonError::new(
                file,
                number,
                "`${` without its `}` (write `$${` for a literal `${`)",
            ));
        };
        let name = &after[..end];
        match values.iter().find(|(n, _)| n == name) {
            Some((_, v)) => out.push_str(v),
            None => {
                let known: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
                return Err(LessonError::new(
                    file,
                    number,
                    if known.is_empty() {
                        format!(
                            "`${{{name}}}` names no variable: the ```lesson block declares none (`vary: NAME = VALUE | VALUE`; `$${{` is a literal `${{`)"
                        )
                    } else {
                        format!(
                            "`${{{name}}}` names no variable; the lesson declares {}",
                            known.join(", ")
                        )
                    },
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vary(lines: &[&str]) -> Vary {
        let mut v = Vary::default();
        for (i, l) in lines.iter().enumerate() {
            v.declare("f.md", i + 1, l).unwrap();
        }
        v
    }

    #[test]
    fn every_variant_below_the_count_is_a_different_combination() {
        let v = vary(&[
            "pod = a | b | c",
            "node net = n1 1 | n2 2",
            "port = 1 | 2 | 3 | 4",
        ]);
        assert_eq!(v.count(), 24);
        assert_eq!(v.rows(0).unwrap(), vec![0, 0, 0]);
        let mut seen = std::collections::BTreeSet::new();
        for n in 0..24 {
            assert!(seen.insert(v.rows(n).unwrap()), "variant {n} repeats");
        }
        // Neighbouring students differ in more than one group.
        assert_ne!(v.rows(1).unwrap()[1..], v.rows(2).unwrap()[1..]);
        for n in 0..24 {
            assert_eq!(v.variant_of(&v.rows(n).unwrap()), n);
        }
        // Lint's variants give each variable every value.
        let covering = v.covering();
        assert_eq!(covering.len(), 3);
        for (g, group) in v.groups.iter().enumerate() {
            let mut got: Vec<usize> = covering.iter().map(|n| v.rows(*n).unwrap()[g]).collect();
            got.push(0);
            got.sort();
            got.dedup();
            assert_eq!(got.len(), group.rows.len());
        }
        let e = v.rows(24).unwrap_err();
        assert!(
            e.contains("has 24 variants") && e.contains("0 to 23"),
            "{e}"
        );
        assert!(Vary::default().rows(1).unwrap_err().contains("no variants"));
        assert_eq!(Vary::default().rows(0).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn values_go_together_and_are_substituted_by_name() {
        let v = vary(&["node net = node-1 10.244.1 | node-2 10.244.2"]);
        let vals = v.values(1).unwrap();
        assert_eq!(
            substitute("f", 1, "pod on ${node}: ${net}.2, $${HOME}", &vals).unwrap(),
            "pod on node-2: 10.244.2.2, ${HOME}"
        );
        let e = substitute("f", 3, "${nod}", &vals).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.reason.contains("node, net"), "{}", e.reason);
        assert!(substitute("f", 1, "${node", &vals).is_err());
        assert_eq!(
            substitute("f", 1, "no vars {x}", &[]).unwrap(),
            "no vars {x}"
        );
    }

    #[test]
    fn a_variant_s_option_order_is_a_fixed_permutation_of_its_own() {
        assert_eq!(option_order("ch2", 0, 3, 4), vec![0, 1, 2, 3]);
        let mut seen = std::collections::BTreeSet::new();
        for variant in 1..=60 {
            let order = option_order("ch2", variant, 0, 3);
            assert_eq!(
                order,
                option_order("ch2", variant, 0, 3),
                "the same each time"
            );
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, vec![0, 1, 2], "a permutation: {order:?}");
            seen.insert(order);
        }
        // Every order of three options is some variant's.
        assert_eq!(seen.len(), 6);
        // The lesson and the quiz count, not only the variant.
        let orders = |f: &dyn Fn(u32) -> Vec<usize>| (1..=20).map(f).collect::<Vec<_>>();
        let base = orders(&|v| option_order("ch2", v, 0, 4));
        assert_ne!(base, orders(&|v| option_order("ch3", v, 0, 4)));
        assert_ne!(base, orders(&|v| option_order("ch2", v, 1, 4)));
        assert_eq!(option_order("ch2", 5, 0, 1), vec![0]);
        assert!(option_order("ch2", 5, 0, 0).is_empty());
    }

    #[test]
    fn bad_declarations_say_what_a_vary_line_reads() {
        let mut v = Vary::default();
        for (bad, says) in [
            ("pod web | shop", "reads"),
            ("= a | b", "names no variable"),
            ("1pod = a | b", "not a variable name"),
            ("a b = x | y", "has 1 value for 2 names"),
            ("pod = web", "at least two"),
            ("pod = web | web", "repeats"),
            ("pod = ${x} | y", "written out"),
        ] {
            let e = v.declare("f.md", 2, bad).unwrap_err();
            assert!(e.reason.contains(says), "{bad}: {}", e.reason);
        }
        v.declare("f.md", 1, "pod = a | b").unwrap();
        assert!(v.declare("f.md", 2, "pod = c | d").is_err());
    }
}
