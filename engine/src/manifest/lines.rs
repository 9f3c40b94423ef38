//! Field paths (`spec.containers[0].imagee`) and the line of a manifest they sit on, so
//! that an error can say where to look.
//!
//! The line is found in the text of the document by walking its block structure (keys
//! by indentation, `- ` items in order); for flow or JSON text, where a key's
//! indentation says nothing, the first line naming the last key after its parent's line
//! is taken. It is a pointer for the reader, never used to decide anything.

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// The steps of a `serde_ignored` path (wrappers such as `Option` take no step).
pub fn segments(path: &serde_ignored::Path<'_>) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut p = path;
    loop {
        match p {
            serde_ignored::Path::Root => break,
            serde_ignored::Path::Seq { parent, index } => {
                out.push(Seg::Index(*index));
                p = parent;
            }
            serde_ignored::Path::Map { parent, key } => {
                out.push(Seg::Key(key.clone()));
                p = parent;
            }
            serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => p = parent,
        }
    }
    out.reverse();
    out
}

/// `spec.containers[0].imagee`, as the API server prints a field path.
pub(crate) fn dotted(path: &[Seg]) -> String {
    render(path, true)
}

/// `spec.containers[].imagee`: the path with its indexes left out, to compare with
/// [`super::schema::UNMODELLED`].
pub fn pattern(path: &[Seg]) -> String {
    render(path, false)
}

fn render(path: &[Seg], indexes: bool) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) if indexes => s.push_str(&format!("[{i}]")),
            Seg::Index(_) => s.push_str("[]"),
        }
    }
    s
}

/// One line of a document with its `- ` markers taken off: the column its content
/// starts at and the columns of the dashes before it.
struct Row<'a> {
    col: usize,
    dashes: Vec<usize>,
    content: &'a str,
}

fn rows(text: &str) -> Vec<Option<Row<'_>>> {
    text.lines()
        .map(|line| {
            let mut col = line.len() - line.trim_start_matches(' ').len();
            let mut rest = &line[col..];
            let mut dashes = Vec::new();
            while let Some(after) = rest.strip_prefix("- ").or_else(|| {
                // A lone `-` ends the line: the item's content starts on the next one.
                (rest == "-").then_some("")
            }) {
                dashes.push(col);
                let trimmed = after.trim_start_matches(' ');
                col += 2 + (after.len() - trimmed.len());
                rest = trimmed;
            }
            if rest.is_empty() && dashes.is_empty() || rest.starts_with('#') {
                return None;
            }
            Some(Row {
                col,
                dashes,
                content: rest,
            })
        })
        .collect()
}

/// Whether `content` starts with the key `key` (plain, single- or double-quoted).
fn is_key(content: &str, key: &str) -> bool {
    [
        format!("{key}:"),
        format!("\"{key}\":"),
        format!("'{key}':"),
        format!("\"{key}\" :"),
    ]
    .iter()
    .any(|k| content.starts_with(k.as_str()))
}

/// The line (1-based) of the field at `path` in `text`, if it can be found.
pub(crate) fn line_of(text: &str, path: &[Seg]) -> Option<usize> {
    if path.is_empty() {
        // The object's first line with content.
        return rows(text).iter().position(Option::is_some).map(|i| i + 1);
    }
    block_line(text, path).or_else(|| flow_line(text, path))
}

fn block_line(text: &str, path: &[Seg]) -> Option<usize> {
    let rows = rows(text);
    // The region of rows the next step looks in, and the column its parent sits at.
    let (mut lo, mut hi) = (0usize, rows.len());
    let mut parent: Option<usize> = None;
    let mut found = None;
    for seg in path {
        match seg {
            Seg::Key(k) => {
                let col = (lo..hi)
                    .filter_map(|i| rows[i].as_ref())
                    .map(|r| r.col)
                    .filter(|c| parent.is_none_or(|p| *c > p))
                    .min()?;
                let i = (lo..hi).find(|i| {
                    rows[*i]
                        .as_ref()
                        .is_some_and(|r| r.col == col && is_key(r.content, k))
                })?;
                let end = (i + 1..hi)
                    .find(|j| {
                        rows[*j]
                            .as_ref()
                            .is_some_and(|r| r.dashes.first().copied().unwrap_or(r.col) <= col)
                    })
                    .unwrap_or(hi);
                found = Some(i);
                // The value: the rest of this row (inline) or the rows below it.
                lo = i + 1;
                hi = end;
                parent = Some(col);
                if lo == hi {
                    lo = i;
                }
            }
            Seg::Index(n) => {
                let dash = (lo..hi)
                    .filter_map(|i| rows[i].as_ref())
                    .filter_map(|r| r.dashes.first().copied())
                    .filter(|d| parent.is_none_or(|p| *d >= p))
                    .min()?;
                let items: Vec<usize> = (lo..hi)
                    .filter(|i| {
                        rows[*i]
                            .as_ref()
                            .is_some_and(|r| r.dashes.first() == Some(&dash))
                    })
                    .collect();
                let i = *items.get(*n)?;
                let end = items.get(n + 1).copied().unwrap_or(hi);
                found = Some(i);
                lo = i;
                hi = end;
                parent = Some(dash);
                // Keys of the item sit past its dash; a nested dash on the same row
                // starts a sequence inside it.
                if let Some(r) = rows[i].as_ref() {
                    if r.dashes.len() > 1 {
                        parent = Some(r.dashes[1].saturating_sub(1).max(dash));
                    }
                }
            }
        }
    }
    found.map(|i| i + 1)
}

fn flow_line(text: &str, path: &[Seg]) -> Option<usize> {
    let mut from = 0;
    let mut found = None;
    for seg in path {
        if let Seg::Key(k) = seg {
            let quoted = format!("\"{k}\"");
            let plain = format!("{k}:");
            let i = text
                .lines()
                .enumerate()
                .skip(from)
                .find(|(_, l)| l.contains(&quoted) || l.contains(&plain))
                .map(|(i, _)| i)?;
            found = Some(i);
            from = i;
        }
    }
    found.map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Seg {
        Seg::Key(k.into())
    }

    #[test]
    fn finds_keys_and_items() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n    imagee: y\n  volumes:\n    - name: v\n";
        assert_eq!(line_of(text, &[key("metadata"), key("name")]), Some(4));
        let p = [key("spec"), key("containers"), Seg::Index(1), key("imagee")];
        assert_eq!(line_of(text, &p), Some(10));
        let p = [key("spec"), key("containers"), Seg::Index(0), key("name")];
        assert_eq!(line_of(text, &p), Some(7));
        let p = [key("spec"), key("volumes"), Seg::Index(0), key("name")];
        assert_eq!(line_of(text, &p), Some(12));
        assert_eq!(dotted(&[key("spec"), Seg::Index(2), key("x")]), "spec[2].x");
        assert_eq!(pattern(&[key("spec"), Seg::Index(2), key("x")]), "spec[].x");
    }

    #[test]
    fn json_falls_back_to_the_first_mention() {
        let text = "{\n  \"kind\": \"Pod\",\n  \"spec\": {\n    \"nodeNam\": \"x\"\n  }\n}\n";
        assert_eq!(line_of(text, &[key("spec"), key("nodeNam")]), Some(4));
    }
}
