//! `get`'s template printers over the JSON `-o json` prints: `-o jsonpath=TEMPLATE` and
//! `-o custom-columns=HEADER:PATH,…`, as kubectl's (`cli-runtime/pkg/printers`:
//! `JSONPathPrinter`, `CustomColumnsPrinter`). The template language is
//! [`crate::render::jsonpath`].

use super::LabError;
use crate::render::jsonpath::Template;
use crate::render::{Outcome, Role, Table};
use serde_json::Value;

/// kubectl's error for a template that does not parse.
fn parse_template(text: &str) -> Result<Template, LabError> {
    Template::parse(text).map_err(|e| LabError::msg(format!("error parsing jsonpath {text}, {e}")))
}

/// A `-o jsonpath=` printer, its template checked before anything is listed.
pub(super) struct JsonPath(Template);

impl JsonPath {
    /// The printer, or kubectl's `error parsing jsonpath …`.
    pub(super) fn new(template: &str) -> Result<Self, LabError> {
        parse_template(template).map(JsonPath)
    }

    /// The template printed over `json` (the object, or a List). kubectl prints no newline
    /// after it; the lab ends every output with one.
    pub(super) fn print(&self, json: &Value) -> Outcome {
        let mut out = Outcome::empty();
        out.block(&self.0.print(json), Role::Plain);
        out
    }
}

/// A `-o custom-columns=` printer: its columns, each a header and a path.
pub(super) struct CustomColumns(Vec<(String, Template)>);

impl CustomColumns {
    /// The printer, or kubectl's error for the spec (`unexpected custom-columns spec: …`)
    /// or for a path.
    pub(super) fn new(spec: &str) -> Result<Self, LabError> {
        let mut columns = Vec::new();
        for part in spec.split(',') {
            let [header, path] = part.split(':').collect::<Vec<_>>()[..] else {
                return Err(LabError::msg(format!(
                    "unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
                )));
            };
            columns.push((header.to_string(), parse_template(&relaxed(path)?)?));
        }
        Ok(CustomColumns(columns))
    }

    /// One row per object of `json` (a List's items, or the object), a column's results
    /// joined by commas, `<none>` when it has none; `None` when there is no object.
    pub(super) fn print(&self, json: &Value) -> Option<Outcome> {
        let items: Vec<&Value> = match json.get("items") {
            Some(Value::Array(items)) if json.get("kind") == Some(&"List".into()) => {
                items.iter().collect()
            }
            _ => vec![json],
        };
        if items.is_empty() {
            return None;
        }
        let headers: Vec<&str> = self.0.iter().map(|(h, _)| h.as_str()).collect();
        let mut t = Table::new(&headers);
        for item in items {
            t.row(
                self.0
                    .iter()
                    .map(|(_, path)| {
                        let found = path.results(item);
                        if found.is_empty() {
                            "<none>".to_string()
                        } else {
                            found.join(",")
                        }
                    })
                    .collect::<Vec<String>>(),
            );
        }
        Some(t.render())
    }
}

/// kubectl's `RelaxedJSONPathExpression`: `name1.name2`, `.name1.name2`, `{name1.name2}`
/// and `{.name1.name2}` are all `{.name1.name2}`.
fn relaxed(path: &str) -> Result<String, LabError> {
    let inner = path.strip_prefix('{').unwrap_or(path);
    let inner = inner.strip_suffix('}').unwrap_or(inner);
    if inner.is_empty() || inner.contains(['{', '}']) {
        return Err(LabError::msg(
            "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'",
        ));
    }
    let dot = if inner.starts_with('.') { "" } else { "." };
    Ok(format!("{{{dot}{inner}}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_columns_read_kubectl_s_specs() {
        let json = serde_json::json!({"kind": "List", "items": [
            {"metadata": {"name": "web"}, "status": {"podIP": "10.244.1.2"}},
            {"metadata": {"name": "db"}, "status": {}}
        ]});
        let p = CustomColumns::new("NAME:.metadata.name,IP:status.podIP").unwrap();
        assert_eq!(
            p.print(&json).unwrap().to_text(),
            "NAME   IP\nweb    10.244.1.2\ndb     <none>\n"
        );
        let e = |s: &str| {
            CustomColumns::new(s)
                .err()
                .map(|e| e.message)
                .unwrap_or_default()
        };
        assert_eq!(
            e("NAME"),
            "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"
        );
        assert!(
            e("A:.x}{.y").starts_with("unexpected path string"),
            "{}",
            e("A:.x}{.y")
        );
        assert_eq!(
            e("A:.items[*"),
            "error parsing jsonpath {.items[*}, unclosed array expect ]"
        );
        assert_eq!(
            JsonPath::new("{.items[*}")
                .err()
                .map(|e| e.message)
                .unwrap_or_default(),
            "error parsing jsonpath {.items[*}, unclosed array expect ]"
        );
    }
}
