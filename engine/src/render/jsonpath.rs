//! kubectl's JSONPath templates (`-o jsonpath=…`, and the paths of `-o custom-columns=…`),
//! the subset the lab reads, over the JSON `-o json` prints (client-go's
//! `util/jsonpath`, which kubectl runs with missing keys allowed).
//!
//! Accepted: text outside braces, printed as is; inside braces a path from the object
//! (`.metadata.name`, `@.x`, `$.x`), with `.field`, `['field']`, `[N]` (negative counts
//! from the end), `[*]` or `.*`, `[start:end]`, and filters `[?(@.path OP literal)]` (OP one
//! of `==`, `!=`, `<`, `<=`, `>`, `>=`; a literal is a quoted string, a number, `true` or
//! `false`) or `[?(@.path)]` (the path exists); `{range PATH}…{end}` (the text between,
//! once per result, its paths from that result); string literals (`{"\t"}`, `{"\n"}`).
//! Not read: recursive descent (`..`) and functions; they are refused by name.
//!
//! Output as kubectl prints it: the results of one action separated by a space; a string
//! bare, anything else as compact JSON; a missing key prints nothing.

use serde_json::Value;

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Vec<Node>);

/// A piece of a template.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// Text printed as is (outside braces, or a quoted literal inside).
    Text(String),
    /// A path whose results are printed.
    Path(Path),
    /// `{range PATH}…{end}`.
    Range(Path, Vec<Node>),
}

/// A path: where it starts and its steps.
#[derive(Debug, Clone, PartialEq)]
struct Path {
    /// `$`: from the whole object (else from the current one: the object, or the range's
    /// result).
    from_root: bool,
    steps: Vec<Step>,
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    All,
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Filter(Path, Option<(Op, Value)>),
}

/// A filter's comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Why a template did not parse (client-go's parser's words).
type ParseError = String;

impl Template {
    /// Parse a template, or client-go's reason it does not parse.
    pub fn parse(text: &str) -> Result<Template, ParseError> {
        let mut stack: Vec<(Path, Vec<Node>)> = Vec::new();
        let mut nodes = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                nodes.push(Node::Text(rest.to_string()));
                break;
            };
            if open > 0 {
                nodes.push(Node::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 1..];
            let close = action_end(after).ok_or("unclosed action")?;
            let action = after[..close].trim();
            rest = &after[close + 1..];
            if action == "end" {
                let (path, outer) = stack.pop().ok_or("not in range, nothing to end")?;
                let body = std::mem::replace(&mut nodes, outer);
                nodes.push(Node::Range(path, body));
            } else if let Some(p) = action.strip_prefix("range ") {
                let path = parse_path(p.trim())?;
                stack.push((path, std::mem::take(&mut nodes)));
            } else if action.starts_with('"') {
                nodes.push(Node::Text(parse_quoted(action)?));
            } else {
                nodes.push(Node::Path(parse_path(action)?));
            }
        }
        if !stack.is_empty() {
            return Err("unclosed range, expect {end}".to_string());
        }
        Ok(Template(nodes))
    }

    /// The template printed for `root`.
    pub fn print(&self, root: &Value) -> String {
        let mut out = String::new();
        print_nodes(&self.0, root, root, &mut out);
        out
    }

    /// Each action's results for `root` (the paths of a custom column), as text.
    pub fn results(&self, root: &Value) -> Vec<String> {
        let mut all = Vec::new();
        for n in &self.0 {
            if let Node::Path(p) = n {
                all.extend(p.eval(root, root).into_iter().map(text));
            }
        }
        all
    }
}

/// Where the action that starts `text` ends (its `}`), quotes skipped.
fn action_end(text: &str) -> Option<usize> {
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '}') => return Some(i),
            (None, _) => {}
        }
    }
    None
}

/// A quoted literal (`"\t"`), its escapes read.
fn parse_quoted(text: &str) -> Result<String, ParseError> {
    let q = text.chars().next().unwrap_or('"');
    let inner = text
        .strip_prefix(q)
        .and_then(|t| t.strip_suffix(q))
        .ok_or_else(|| format!("unterminated quoted string: {text}"))?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => return Err(format!("unterminated quoted string: {text}")),
        }
    }
    Ok(out)
}

/// A path (`.items[*].metadata.name`, `$.kind`, `@.status`).
fn parse_path(text: &str) -> Result<Path, ParseError> {
    let (from_root, mut rest) = match text.chars().next() {
        Some('$') => (true, &text[1..]),
        Some('@') => (false, &text[1..]),
        _ => (false, text),
    };
    let mut steps = Vec::new();
    while let Some(c) = rest.chars().next() {
        match c {
            '.' => {
                rest = &rest[1..];
                if rest.starts_with('.') {
                    return Err(
                        "recursive descent (..) is not read by the lab's JSONPath".to_string()
                    );
                }
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                let name = &rest[..end];
                rest = &rest[end..];
                match name {
                    "" => {}
                    "*" => steps.push(Step::All),
                    n if n.chars().all(|c| c.is_alphanumeric() || "_-/$".contains(c)) => {
                        steps.push(Step::Field(n.to_string()))
                    }
                    n => {
                        let bad = n
                            .chars()
                            .find(|c| !(c.is_alphanumeric() || "_-/$".contains(*c)))
                            .unwrap_or(' ');
                        return Err(format!(
                            "unrecognized character in action: U+{:04X} '{bad}'",
                            bad as u32
                        ));
                    }
                }
            }
            '[' => {
                let close = bracket_end(rest).ok_or("unclosed array expect ]")?;
                let inner = rest[1..close].trim();
                rest = &rest[close + 1..];
                steps.push(parse_bracket(inner)?);
            }
            c if c.is_whitespace() => rest = rest.trim_start(),
            c => {
                return Err(format!(
                    "unrecognized character in action: U+{:04X} '{c}'",
                    c as u32
                ));
            }
        }
    }
    Ok(Path { from_root, steps })
}

/// Where the bracket that opens `text` closes, nested brackets and quotes skipped.
fn bracket_end(text: &str) -> Option<usize> {
    let mut depth = 0;
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The inside of `[…]`.
fn parse_bracket(inner: &str) -> Result<Step, ParseError> {
    if inner == "*" {
        return Ok(Step::All);
    }
    if let Some(f) = inner.strip_prefix('?') {
        let body = f
            .trim()
            .strip_prefix('(')
            .and_then(|b| b.strip_suffix(')'))
            .ok_or("unterminated filter")?;
        return parse_filter(body.trim());
    }
    if inner.starts_with('\'') || inner.starts_with('"') {
        return Ok(Step::Field(parse_quoted(inner)?));
    }
    let number = |s: &str| -> Result<Option<i64>, ParseError> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        s.parse()
            .map(Some)
            .map_err(|_| format!("invalid array index {s}"))
    };
    match inner.split_once(':') {
        Some((a, b)) => Ok(Step::Slice(
            number(a)?,
            number(b.split(':').next().unwrap_or(""))?,
        )),
        None => Ok(Step::Index(
            number(inner)?.ok_or_else(|| "invalid array index ".to_string())?,
        )),
    }
}

/// A filter's body: `@.path OP literal`, or `@.path`.
fn parse_filter(body: &str) -> Result<Step, ParseError> {
    const OPS: [(&str, Op); 6] = [
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("<", Op::Lt),
        (">", Op::Gt),
    ];
    for (text, op) in OPS {
        if let Some((left, right)) = body.split_once(text) {
            let path = parse_path(left.trim())?;
            let right = right.trim();
            let value = if right.starts_with('"') || right.starts_with('\'') {
                Value::String(parse_quoted(right)?)
            } else {
                serde_json::from_str(right)
                    .map_err(|_| format!("unrecognized filter value {right}"))?
            };
            return Ok(Step::Filter(path, Some((op, value))));
        }
    }
    Ok(Step::Filter(parse_path(body)?, None))
}

impl Path {
    /// The values the path reaches from `current` (or `root` with `$`).
    fn eval<'v>(&self, root: &'v Value, current: &'v Value) -> Vec<&'v Value> {
        let mut at = vec![if self.from_root { root } else { current }];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in at {
                step.apply(root, v, &mut next);
            }
            at = next;
        }
        at
    }
}

impl Step {
    /// The values this step reaches from `v`.
    fn apply<'v>(&self, root: &'v Value, v: &'v Value, out: &mut Vec<&'v Value>) {
        match (self, v) {
            (Step::Field(name), Value::Object(m)) => out.extend(m.get(name)),
            (Step::All, Value::Array(a)) => out.extend(a),
            (Step::All, Value::Object(m)) => out.extend(m.values()),
            (Step::Index(i), Value::Array(a)) => {
                let at = if *i < 0 { a.len() as i64 + i } else { *i };
                out.extend(usize::try_from(at).ok().and_then(|at| a.get(at)));
            }
            (Step::Slice(from, to), Value::Array(a)) => {
                let len = a.len() as i64;
                let clamp = |x: i64| (if x < 0 { len + x } else { x }).clamp(0, len) as usize;
                let (from, to) = (clamp(from.unwrap_or(0)), clamp(to.unwrap_or(len)));
                if from < to {
                    out.extend(&a[from..to]);
                }
            }
            (Step::Filter(path, test), Value::Array(a)) => {
                for item in a {
                    let found = path.eval(root, item);
                    let keep = match test {
                        None => !found.is_empty(),
                        Some((op, lit)) => found.iter().any(|f| compare(f, *op, lit)),
                    };
                    if keep {
                        out.push(item);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A filter's comparison: numbers as numbers, strings as strings, else only (in)equality.
fn compare(a: &Value, op: Op, b: &Value) -> bool {
    let order = match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .zip(y.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y)),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => (a == b).then_some(std::cmp::Ordering::Equal),
    };
    use std::cmp::Ordering::*;
    match op {
        Op::Eq => order == Some(Equal),
        Op::Ne => order != Some(Equal),
        Op::Lt => order == Some(Less),
        Op::Le => matches!(order, Some(Less | Equal)),
        Op::Gt => order == Some(Greater),
        Op::Ge => matches!(order, Some(Greater | Equal)),
    }
}

/// A result as kubectl prints it: a string bare, anything else as compact JSON.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn print_nodes(nodes: &[Node], root: &Value, current: &Value, out: &mut String) {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Path(p) => {
                let texts: Vec<String> = p.eval(root, current).into_iter().map(text).collect();
                out.push_str(&texts.join(" "));
            }
            Node::Range(p, body) => {
                for v in p.eval(root, current) {
                    print_nodes(body, root, v, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> Value {
        serde_json::json!({
            "kind": "List",
            "items": [
                {"metadata": {"name": "web", "labels": {"app": "web"}}, "status": {"podIP": "10.244.1.2", "phase": "Running"}, "n": 2},
                {"metadata": {"name": "db"}, "status": {"phase": "Pending"}, "n": 5}
            ]
        })
    }

    fn print(t: &str) -> String {
        Template::parse(t).unwrap().print(&list())
    }

    #[test]
    fn kubectl_s_forms_print_as_kubectl_prints_them() {
        assert_eq!(print("{.kind}"), "List");
        assert_eq!(print("{.items[*].metadata.name}"), "web db");
        assert_eq!(print("{.items[0].status.podIP}"), "10.244.1.2");
        assert_eq!(print("{.items[-1].metadata.name}"), "db");
        assert_eq!(print("{.items[*].status.podIP}"), "10.244.1.2");
        assert_eq!(
            print("{range .items[*]}{.metadata.name}{\"\\t\"}{.status.phase}{\"\\n\"}{end}"),
            "web\tRunning\ndb\tPending\n"
        );
        assert_eq!(
            print("{.items[?(@.status.phase==\"Pending\")].metadata.name}"),
            "db"
        );
        assert_eq!(print("{.items[?(@.n>3)].metadata.name}"), "db");
        assert_eq!(print("{.items[?(@.status.podIP)].metadata.name}"), "web");
        assert_eq!(print("{.items[0].metadata.labels}"), "{\"app\":\"web\"}");
        assert_eq!(print("{.items[0:1].metadata.name}"), "web");
        assert_eq!(print("{.items[0]['metadata'].name}"), "web");
        assert_eq!(
            print("names: {$.items[*].metadata.name}!"),
            "names: web db!"
        );
        // A missing key prints nothing.
        assert_eq!(print("{.items[*].spec.nodeName}"), "");
        assert_eq!(print("{.items[7].metadata.name}"), "");
    }

    #[test]
    fn bad_templates_say_what_client_go_says() {
        let e = |t: &str| Template::parse(t).unwrap_err();
        assert_eq!(e("{.items[*}"), "unclosed array expect ]");
        assert_eq!(e("{.metadata.name"), "unclosed action");
        assert_eq!(e("{end}"), "not in range, nothing to end");
        assert_eq!(e("{range .items[*]}{.x}"), "unclosed range, expect {end}");
        assert!(e("{..name}").contains("recursive descent"));
        assert!(e("{.items[?(@.x==]}").contains("filter"));
    }
}
