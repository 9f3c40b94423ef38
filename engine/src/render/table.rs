//! Aligned, kubectl-style tables: upper-case headers, columns padded with three spaces.

use super::outcome::{Line, Outcome, Role};

/// A table being built: a header row and data rows of cells with roles.
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<(String, Role)>>,
    /// Spaces between columns: 3 as `kubectl get` prints, 2 in a describer's tab writer.
    gap: usize,
}

impl Table {
    /// A table with these column titles.
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            gap: 3,
        }
    }

    /// Add a row of plain cells.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows
            .push(cells.into_iter().map(|c| (c.into(), Role::Plain)).collect());
    }

    /// The same table with `gap` spaces between columns (kubectl's describers write
    /// through `tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)`: a padding of 2).
    pub(crate) fn with_gap(mut self, gap: usize) -> Self {
        self.gap = gap;
        self
    }

    /// Add a row whose cells carry roles.
    pub(crate) fn row_styled(&mut self, cells: Vec<(String, Role)>) {
        self.rows.push(cells);
    }

    /// Append another table's rows (the same columns): one table for several names.
    pub fn append(&mut self, other: Table) {
        self.rows.extend(other.rows);
    }

    /// Number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no data rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Render with columns aligned like kubectl (three spaces between columns).
    pub fn render(&self) -> Outcome {
        self.render_remembering(&mut Vec::new(), true)
    }

    /// Render as kubectl's tab writer does with `RememberWidths` (its `get -w` prints each
    /// change as it comes): a column is as wide as the widest cell printed in it so far,
    /// `widths` (grown here), or in these rows; the header only when `header`.
    pub fn render_remembering(&self, widths: &mut Vec<usize>, header: bool) -> Outcome {
        let cols = self.header.len();
        widths.resize(cols.max(widths.len()), 0);
        if header {
            for (i, h) in self.header.iter().enumerate() {
                widths[i] = widths[i].max(h.chars().count());
            }
        }
        for r in &self.rows {
            for (i, (c, _)) in r.iter().enumerate().take(cols) {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let mut out = Outcome::empty();
        if header {
            let mut head = Line::new();
            for (i, h) in self.header.iter().enumerate() {
                let text = if i + 1 == cols {
                    h.clone()
                } else {
                    pad(h, widths[i] + self.gap)
                };
                head = head.push(text, Role::Header);
            }
            out.line(head);
        }
        for r in &self.rows {
            let mut line = Line::new();
            for (i, (c, role)) in r.iter().enumerate().take(cols) {
                let text = if i + 1 == cols {
                    c.clone()
                } else {
                    pad(c, widths[i] + self.gap)
                };
                line = line.push(text, *role);
            }
            out.line(line);
        }
        out
    }
}

impl Default for Table {
    fn default() -> Self {
        Table::new(&[])
    }
}

fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    let mut out = String::with_capacity(width);
    out.push_str(s);
    for _ in n..width {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_like_kubectl() {
        let mut t = Table::new(&["NAME", "STATUS"]);
        t.row(["node-1", "Ready"]);
        t.row(["n", "NotReady"]);
        assert_eq!(
            t.render().to_text(),
            "NAME     STATUS\nnode-1   Ready\nn        NotReady\n"
        );
    }

    #[test]
    fn remembered_widths_only_grow() {
        let mut widths = Vec::new();
        let mut t = Table::new(&["NAME", "STATUS", "AGE"]);
        t.row(["web", "Pending", "0s"]);
        assert_eq!(
            t.render_remembering(&mut widths, true).to_text(),
            "NAME   STATUS    AGE\nweb    Pending   0s\n"
        );
        let mut t = Table::new(&["NAME", "STATUS", "AGE"]);
        t.row(["web", "ContainerCreating", "0s"]);
        assert_eq!(
            t.render_remembering(&mut widths, false).to_text(),
            "web    ContainerCreating   0s\n"
        );
        let mut t = Table::new(&["NAME", "STATUS", "AGE"]);
        t.row(["web", "Running", "2s"]);
        assert_eq!(
            t.render_remembering(&mut widths, false).to_text(),
            "web    Running             2s\n"
        );
    }
}
