//! The label selectors `kubectl get -l` takes: `app=web`, `app!=web`, `app`, `!app`,
//! `tier in (a,b)`, `tier notin (a)`, `n>3`, joined by `,` (AND).
//!
//! The lexer, the grammar and the error texts follow apimachinery's parser
//! (`staging/src/k8s.io/apimachinery/pkg/labels/selector.go`, `Parse`): whitespace separates
//! tokens; `in`/`notin` are operators only after a key (`x in (in)` is legal); an empty
//! value is legal (`app=`, `app in (,a)`); every error of a requirement is prefixed with
//! `unable to parse requirement: `.

use std::collections::BTreeMap;

/// How a requirement relates its key and values (`selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `k=v`, `k==v`, `k in (v,…)`
    In,
    /// `k!=v`, `k notin (v,…)`: also true when the key is absent
    NotIn,
    /// `k`
    Exists,
    /// `!k`
    DoesNotExist,
    /// `k>N`
    Gt,
    /// `k<N`
    Lt,
}

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub op: Op,
    /// The values (empty for Exists and DoesNotExist).
    pub values: Vec<String>,
}

impl Requirement {
    /// Whether `labels` satisfy this requirement (`Requirement.Matches`).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.op.holds(labels.get(&self.key), &self.values)
    }
}

impl Op {
    /// `Requirement.Matches` for a label's value (`None`: the key is absent) against the
    /// requirement's values. The one place these semantics live: a `metav1.LabelSelector`'s
    /// `matchExpressions` match through it too ([`super::selector`]).
    pub fn holds(self, value: Option<&String>, values: &[String]) -> bool {
        match self {
            Op::In => value.is_some_and(|v| values.contains(v)),
            Op::NotIn => value.is_none_or(|v| !values.contains(v)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::Gt | Op::Lt => {
                let (Some(have), Some(want)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    values.first().and_then(|w| w.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self == Op::Gt {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

/// A parsed selector: every requirement must hold (an empty one selects everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelQuery {
    /// The requirements, sorted by key as apimachinery sorts them.
    pub requirements: Vec<Requirement>,
}

impl LabelQuery {
    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    Error,
    ClosedPar,
    Comma,
    Not,
    DoubleEquals,
    Equals,
    Gt,
    Ident,
    In,
    Lt,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::Not,
        "==" => Tok::DoubleEquals,
        "=" => Tok::Equals,
        ">" => Tok::Gt,
        "in" => Tok::In,
        "<" => Tok::Lt,
        "!=" => Tok::NotEquals,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The lexer: the longest run of special symbols that is an operator, or a word.
fn lex(s: &str) -> Vec<(Tok, String)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && space(b[i]) {
            i += 1;
        }
        if i == b.len() {
            out.push((Tok::End, String::new()));
            return out;
        }
        let start = i;
        if special(b[i]) {
            // Grow while the buffer is (or, before any match, may become) an operator.
            let mut best: Option<(Tok, usize)> = None;
            while i < b.len() && special(b[i]) {
                i += 1;
                match keyword(&s[start..i]) {
                    Some(t) => best = Some((t, i)),
                    None if best.is_some() => break,
                    None => {}
                }
            }
            match best {
                Some((t, end)) => {
                    out.push((t, s[start..end].to_string()));
                    i = end;
                }
                None => {
                    out.push((
                        Tok::Error,
                        format!("error expected: keyword found '{}'", &s[start..i]),
                    ));
                }
            }
        } else {
            while i < b.len() && !special(b[i]) && !space(b[i]) {
                i += 1;
            }
            let w = &s[start..i];
            out.push((keyword(w).unwrap_or(Tok::Ident), w.to_string()));
        }
    }
}

struct Parser {
    items: Vec<(Tok, String)>,
    pos: usize,
}

impl Parser {
    /// The current token; in a value position `in`/`notin` are plain words.
    fn peek(&self, values: bool) -> (Tok, String) {
        let (t, l) = self.items[self.pos.min(self.items.len() - 1)].clone();
        (if values { as_value(t) } else { t }, l)
    }

    fn next(&mut self, values: bool) -> (Tok, String) {
        let r = self.peek(values);
        self.pos += 1;
        r
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut t, mut key) = self.next(true);
        let not = t == Tok::Not;
        if not {
            (t, key) = self.next(true);
        }
        if t != Tok::Ident {
            return Err(format!("found '{key}', expected: identifier"));
        }
        check_key(&key)?;
        let (after, _) = self.peek(true);
        if not || after == Tok::End || after == Tok::Comma {
            // `!k` takes no operator: `!k=v` fails at the `=` as apimachinery does.
            let op = if not { Op::DoesNotExist } else { Op::Exists };
            return Ok(Requirement {
                key,
                op,
                values: Vec::new(),
            });
        }
        let (t, lit) = self.next(false);
        let op = match t {
            Tok::In => Op::In,
            Tok::NotIn => Op::NotIn,
            Tok::Equals | Tok::DoubleEquals => Op::In,
            Tok::NotEquals => Op::NotIn,
            Tok::Gt => Op::Gt,
            Tok::Lt => Op::Lt,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        let values = if matches!(t, Tok::In | Tok::NotIn) {
            self.value_set()?
        } else {
            vec![self.exact_value()?]
        };
        if matches!(op, Op::Gt | Op::Lt) && values[0].parse::<i64>().is_err() {
            return Err(format!(
                "values[0]: Invalid value: \"{}\": for 'Gt', 'Lt' operators, the value must be an integer",
                values[0]
            ));
        }
        for (i, v) in values.iter().enumerate() {
            check_value(&key, v, i)?;
        }
        Ok(Requirement { key, op, values })
    }

    fn exact_value(&mut self) -> Result<String, String> {
        let (t, _) = self.peek(true);
        if t == Tok::End || t == Tok::Comma {
            return Ok(String::new());
        }
        match self.next(true) {
            (Tok::Ident, v) => Ok(v),
            (_, lit) => Err(format!("found '{lit}', expected: identifier")),
        }
    }

    fn value_set(&mut self) -> Result<Vec<String>, String> {
        let (t, lit) = self.next(true);
        if t != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.peek(true);
        let mut set = std::collections::BTreeSet::new();
        match t {
            Tok::ClosedPar => {
                self.next(true);
                set.insert(String::new());
            }
            Tok::Ident | Tok::Comma => {
                loop {
                    match self.next(true) {
                        (Tok::Ident, v) => {
                            set.insert(v);
                            match self.peek(true) {
                                (Tok::Comma, _) => continue,
                                (Tok::ClosedPar, _) => break,
                                (_, l2) => {
                                    return Err(format!("found '{l2}', expected: ',' or ')'"));
                                }
                            }
                        }
                        (Tok::Comma, _) => {
                            // `(,a)`, `(a,,b)` and `(a,)` hold the empty value.
                            if set.is_empty() {
                                set.insert(String::new());
                            }
                            match self.peek(true).0 {
                                Tok::ClosedPar => {
                                    set.insert(String::new());
                                    break;
                                }
                                Tok::Comma => {
                                    set.insert(String::new());
                                }
                                _ => {}
                            }
                        }
                        (_, l) => return Err(format!("found '{l}', expected: ',', or identifier")),
                    }
                }
                if self.next(true).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
            }
            _ => return Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
        Ok(set.into_iter().collect())
    }
}

fn as_value(t: Tok) -> Tok {
    if matches!(t, Tok::In | Tok::NotIn) {
        Tok::Ident
    } else {
        t
    }
}

/// A label name part: 1-63 of `[A-Za-z0-9_.-]`, alphanumeric at both ends.
fn name_part_ok(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// `validateLabelKey`: a qualified name (`[prefix/]name`). The parser has no field path,
/// so apimachinery prints it as `<nil>`.
fn check_key(k: &str) -> Result<(), String> {
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    let prefix_ok = prefix.is_none_or(|p| {
        p.len() <= 253
            && p.split('.').all(|l| {
                name_part_ok(l, 63)
                    && l.bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            })
    });
    if name_part_ok(name, 63) && prefix_ok && !name.contains('/') {
        return Ok(());
    }
    Err(format!(
        "<nil>: Invalid value: \"{k}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters, with an optional DNS-subdomain prefix and '/')"
    ))
}

/// `validateLabelValue`: empty, or a name part.
fn check_value(k: &str, v: &str, i: usize) -> Result<(), String> {
    if v.is_empty() || name_part_ok(v, 63) {
        return Ok(());
    }
    Err(format!(
        "values[{i}][{k}]: Invalid value: \"{v}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)"
    ))
}

/// Parse a selector as `kubectl get -l` does (`labels.Parse`).
pub fn parse(text: &str) -> Result<LabelQuery, String> {
    let mut p = Parser {
        items: lex(text),
        pos: 0,
    };
    let mut reqs = Vec::new();
    loop {
        let (t, lit) = p.peek(true);
        match t {
            Tok::Ident | Tok::Not => {
                let r = p
                    .requirement()
                    .map_err(|e| format!("unable to parse requirement: {e}"))?;
                reqs.push(r);
                match p.next(true) {
                    (Tok::End, _) => break,
                    (Tok::Comma, _) => {
                        let (t2, l2) = p.peek(true);
                        if t2 != Tok::Ident && t2 != Tok::Not {
                            return Err(format!("found '{l2}', expected: identifier after ','"));
                        }
                    }
                    (_, l) => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                }
            }
            Tok::End => break,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: !, identifier, or 'end of string'"
                ));
            }
        }
    }
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(LabelQuery { requirements: reqs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn each_form_selects_as_kubectl_does() {
        let web = labels(&[("app", "web"), ("tier", "front"), ("n", "5")]);
        let db = labels(&[("app", "db")]);
        for (sel, on_web, on_db) in [
            ("app=web", true, false),
            ("app==web", true, false),
            ("app!=web", false, true),
            ("tier", true, false),
            ("!tier", false, true),
            ("app=web,tier=front", true, false),
            ("app in (web, db)", true, true),
            ("app notin (web)", false, true),
            ("tier notin (x)", true, true),
            ("n>3", true, false),
            ("n<3", false, false),
            ("", true, true),
            ("x in (in)", false, false),
            ("app=", false, false),
        ] {
            let q = parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!((q.matches(&web), q.matches(&db)), (on_web, on_db), "{sel}");
        }
    }

    #[test]
    fn errors_are_apimachinery_s() {
        for (sel, msg) in [
            ("app=web=x", "found '=', expected: ',' or 'end of string'"),
            (
                "=web",
                "found '=', expected: !, identifier, or 'end of string'",
            ),
            ("app=web,", "found '', expected: identifier after ','"),
            (
                "app web",
                "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "app in web",
                "unable to parse requirement: found 'web' expected: '('",
            ),
            (
                "app in (a",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "app=(",
                "unable to parse requirement: found '(', expected: identifier",
            ),
            (
                "app!",
                "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "n>x",
                "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
            (
                "-bad=x",
                "unable to parse requirement: <nil>: Invalid value: \"-bad\"",
            ),
            (
                "app=-x",
                "unable to parse requirement: values[0][app]: Invalid value: \"-x\"",
            ),
        ] {
            let e = parse(sel).expect_err(sel);
            assert!(e.contains(msg), "{sel}: {e}");
        }
    }
}
