//! Comparing what the model printed with what the real plugin printed. Some things are
//! random on a real node and cannot match: MAC addresses (the kernel picks them), the
//! host-side veth name (`veth` + 8 random hex digits) and the paths of the namespaces (the
//! real pod's namespace is one the lab named). Those are normalised away; everything else
//! (interfaces, IPs, gateways, routes, DNS, error codes and messages, exit status) must be
//! the same.

use serde_json::Value;

/// The most difference lines one comparison reports.
pub(crate) const MAX_LINES: usize = 8;

/// Whether `name` is a veth name as the bridge and ptp plugins make them
/// (`ip.RandomVethName`: `veth` and 8 hex digits).
pub(crate) fn is_random_veth(name: &str) -> bool {
    name.strip_prefix("veth")
        .is_some_and(|h| h.len() == 8 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Replace every MAC with `<mac>`, every random veth name with `<veth>`, and each real path
/// in `paths` (real, model) with the model's.
pub fn normalise(v: &mut Value, paths: &[(String, String)]) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match (k.as_str(), &*x) {
                    ("mac", Value::String(_)) => *x = Value::String("<mac>".into()),
                    ("name", Value::String(s)) if is_random_veth(s) => {
                        *x = Value::String("<veth>".into());
                    }
                    _ => normalise(x, paths),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| normalise(x, paths)),
        Value::String(s) => *s = normalise_text(s, paths),
        _ => {}
    }
}

/// What libcni makes of a plugin's (stdout, stderr, exit) (`pkg/invoke/raw_exec.go`):
/// stdout on success; on failure the error document it printed, or, when it printed
/// nothing, an error of code 0 quoting stderr (a Go panic's trace) — which is what the
/// model records for such a plugin. Returns (stdout as libcni reads it, failed).
pub fn libcni_view(stdout: &str, stderr: &str, code: Option<i32>) -> (String, bool) {
    if code == Some(0) {
        return (stdout.to_string(), false);
    }
    if !stdout.trim().is_empty() {
        return (stdout.to_string(), true);
    }
    let msg = if stderr.is_empty() {
        match code {
            Some(c) => format!("netplugin failed with no error message: exit status {c}"),
            None => "netplugin failed with no error message: signal: killed".to_string(),
        }
    } else {
        // Go's %q; JSON's quoting is the same for the ASCII a trace holds.
        format!(
            "netplugin failed: {}",
            serde_json::to_string(stderr).unwrap_or_default()
        )
    };
    (
        serde_json::json!({ "code": 0, "msg": msg }).to_string(),
        true,
    )
}

/// [`normalise`] for text that is not JSON (and for error messages): paths, veth names,
/// and a Go panic's goroutine trace (addresses and frames vary; the model keeps the panic
/// message and elides the trace).
pub(crate) fn normalise_text(s: &str, paths: &[(String, String)]) -> String {
    let s = match (
        s.starts_with("netplugin failed: \"panic: "),
        s.find("goroutine "),
    ) {
        (true, Some(i)) => &s[..i],
        _ => s,
    };
    let mut out = s.to_string();
    for (real, model) in paths {
        if !real.is_empty() && real != model {
            out = out.replace(real.as_str(), model);
        }
    }
    out.split_inclusive(|c: char| !c.is_ascii_alphanumeric())
        .map(|w| {
            let (word, sep) = match w.char_indices().last() {
                Some((i, c)) if !c.is_ascii_alphanumeric() => w.split_at(i),
                _ => (w, ""),
            };
            if is_random_veth(word) {
                format!("<veth>{sep}")
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// The differences between the model's (stdout, exit) and the real plugin's, after
/// normalising; empty when they are the same. Each line is `- model` / `+ real` or a
/// sentence (`exit: …`).
/// libcni tells success (exit 0) from failure (any other status), so that is what is
/// compared of the exit status; `real_stdout` is the real reply as [`libcni_view`] reads it.
pub fn differences(
    model_stdout: &str,
    model_failed: bool,
    real_stdout: &str,
    real_exit: Option<i32>,
    paths: &[(String, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    if (real_exit != Some(0)) != model_failed {
        out.push(format!(
            "exit: model {}, real {}",
            i32::from(model_failed),
            real_exit.map_or_else(|| "killed by a signal".to_string(), |c| c.to_string())
        ));
    }
    let (m, r) = match (
        serde_json::from_str::<Value>(model_stdout),
        serde_json::from_str::<Value>(real_stdout),
    ) {
        (Ok(mut m), Ok(mut r)) => {
            normalise(&mut m, paths);
            normalise(&mut r, paths);
            if m == r {
                return out;
            }
            (pretty(&m), pretty(&r))
        }
        _ => (
            normalise_text(model_stdout.trim(), paths),
            normalise_text(real_stdout.trim(), paths),
        ),
    };
    if m != r {
        out.extend(line_diff(&m, &r));
    }
    out.truncate(MAX_LINES);
    out
}

/// The model's stdout and the real one's (as libcni reads it), normalised, in two columns
/// aligned line by line: `model │ real`, with `≠` between the columns where they differ.
pub(crate) fn side_by_side(
    model_stdout: &str,
    real_stdout: &str,
    paths: &[(String, String)],
) -> Vec<String> {
    let norm = |s: &str| match serde_json::from_str::<Value>(s) {
        Ok(mut v) => {
            normalise(&mut v, paths);
            pretty(&v)
        }
        Err(_) => normalise_text(s.trim_end(), paths),
    };
    let (m, r) = (norm(model_stdout), norm(real_stdout));
    let a: Vec<&str> = m.lines().collect();
    let b: Vec<&str> = r.lines().collect();
    let rows = align(&a, &b);
    let width = a
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    rows.into_iter()
        .map(|(l, r)| {
            let mark = if l.is_some() && l == r { '│' } else { '≠' };
            let l = l.unwrap_or("");
            let pad = width.saturating_sub(l.chars().count());
            format!("{l}{} {mark} {}", " ".repeat(pad), r.unwrap_or(""))
                .trim_end()
                .to_string()
        })
        .collect()
}

/// Rows of two line lists aligned on their longest common subsequence; between two common
/// lines, the lines only one side has are paired up in order.
fn align<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Option<&'a str>, Option<&'a str>)> {
    if a.len() * b.len() > 250_000 {
        let n = a.len().max(b.len());
        return (0..n)
            .map(|i| (a.get(i).copied(), b.get(i).copied()))
            .collect();
    }
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut rows = Vec::new();
    let (mut only_a, mut only_b): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let flush = |rows: &mut Vec<_>, only_a: &mut Vec<&'a str>, only_b: &mut Vec<&'a str>| {
        let n = only_a.len().max(only_b.len());
        for k in 0..n {
            rows.push((only_a.get(k).copied(), only_b.get(k).copied()));
        }
        only_a.clear();
        only_b.clear();
    };
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            flush(&mut rows, &mut only_a, &mut only_b);
            rows.push((Some(a[i]), Some(b[j])));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            only_a.push(a[i]);
            i += 1;
        } else {
            only_b.push(b[j]);
            j += 1;
        }
    }
    flush(&mut rows, &mut only_a, &mut only_b);
    rows
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The lines only one side has (`- ` the model's, `+ ` the real one's), in order, by the
/// longest common subsequence of lines.
pub(crate) fn line_diff(model: &str, real: &str) -> Vec<String> {
    let a: Vec<&str> = model.lines().collect();
    let b: Vec<&str> = real.lines().collect();
    if a.len() * b.len() > 250_000 {
        return vec![
            "- (model's output, too long to diff)".into(),
            "+ (real output)".into(),
        ];
    }
    // Between two common lines ([`align`]), the model's lines, then the real one's.
    let (mut out, mut plus) = (Vec::new(), Vec::new());
    for (m, r) in align(&a, &b) {
        if m.is_some() && m == r {
            out.append(&mut plus);
            continue;
        }
        out.extend(m.map(|l| format!("- {}", l.trim())));
        plus.extend(r.map(|l| format!("+ {}", l.trim())));
    }
    out.append(&mut plus);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths() -> Vec<(String, String)> {
        vec![(
            "/var/run/netns/cnilab-1-p1".into(),
            "/var/run/netns/cni-abc".into(),
        )]
    }

    #[test]
    fn macs_veths_and_paths_are_normalised() {
        let model = json!({"interfaces": [{"name": "cni0", "mac": "a2:59:ba:56:f9:49"},
            {"name": "veth56d1da70", "mac": "da:b9:d3:db:3a:2e"},
            {"name": "eth0", "mac": "7a:46:fb:ea:c7:61", "sandbox": "/var/run/netns/cni-abc"}]});
        let real = json!({"interfaces": [{"name": "cni0", "mac": "f2:4d:54:d5:62:df"},
            {"name": "vethf0f3a61b", "mac": "aa:21:e5:fc:81:48"},
            {"name": "eth0", "mac": "72:75:2a:72:8a:32", "sandbox": "/var/run/netns/cnilab-1-p1"}]});
        let d = differences(
            &model.to_string(),
            false,
            &real.to_string(),
            Some(0),
            &paths(),
        );
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn a_different_address_is_reported_line_by_line() {
        let model = json!({"ips": [{"address": "10.244.1.2/24"}]}).to_string();
        let real = json!({"ips": [{"address": "10.244.1.3/24"}]}).to_string();
        let d = differences(&model, false, &real, Some(0), &[]);
        assert_eq!(
            d,
            vec![
                "- \"address\": \"10.244.1.2/24\"",
                "+ \"address\": \"10.244.1.3/24\""
            ]
        );
    }

    #[test]
    fn exit_codes_and_plain_text_are_compared() {
        let d = differences("", false, "", Some(1), &[]);
        assert_eq!(d, vec!["exit: model 0, real 1"]);
        assert!(differences("", false, "\n", Some(0), &[]).is_empty());
        assert_eq!(
            normalise_text("failed to rename vethabcdef01: busy", &[]),
            "failed to rename <veth>: busy"
        );
        assert!(!is_random_veth("veth0"));
    }

    #[test]
    fn side_by_side_pairs_the_lines() {
        let model = json!({"ips": [{"address": "10.244.1.2/24", "gateway": "10.244.1.1"}]});
        let real = json!({"ips": [{"address": "10.244.1.3/24", "gateway": "10.244.1.1"}]});
        let rows = side_by_side(&model.to_string(), &real.to_string(), &[]);
        assert!(
            rows.contains(
                &"      \"address\": \"10.244.1.2/24\", ≠       \"address\": \"10.244.1.3/24\","
                    .to_string()
            ),
            "{rows:#?}"
        );
        assert!(
            rows.iter().filter(|r| r.contains('≠')).count() == 1,
            "{rows:#?}"
        );
        assert_eq!(side_by_side("", "", &[]), Vec::<String>::new());
    }

    #[test]
    fn a_panic_reads_as_libcni_reports_it() {
        let stderr = "panic: runtime error: boom\n\ngoroutine 1 [running]:\nmain.cmdCheck(0x1)\n";
        let (view, failed) = libcni_view("", stderr, Some(2));
        assert!(failed);
        let model = r#"{"code": 0, "msg": "netplugin failed: \"panic: runtime error: boom\\n\\ngoroutine 1 [running]:\\n…\""}"#;
        assert!(differences(model, true, &view, Some(2), &[]).is_empty());
        let (view, _) = libcni_view("", "", None);
        assert!(view.contains("signal: killed"), "{view}");
    }
}
