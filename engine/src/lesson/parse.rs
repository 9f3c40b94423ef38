//! The lesson file format (Markdown, one file per chapter) → [`Lesson`].
//!
//! ````text
//! # Any title prose
//! ```lesson
//! format_version: 1
//! id: ch7-hands-on
//! title: Chapter 7 hands-on
//! chapter: 7
//! vary: pod = web | shop     variables a variant changes (see `vary`); `${pod}` below
//! ```
//! ## Step 1 · A title
//! Section: 7.4 scenario 1
//! Teaching text…
//! **Task:** one sentence.
//! ```lab          reference commands (a leading `!`: meant to fail)
//! ```check        one predicate per line, all must hold (see `check`)
//! ```hint         one hint per block
//! ## Quiz         (any other `##` heading ends the steps' part it is in)
//! ```quiz         question:/A) …/B) …/answer:/explanation:
//! ```predict      question:/run:/answer:/explanation:
//! ````
//! Other fenced blocks in a step are part of its teaching text. The parser stops at the
//! first structural error; the linter (`lint`) finds the rest.

use super::FORMAT_VERSION;
use super::check;
use super::model::{Hint, Lesson, Quiz, QuizKind, RefCommand, Step, option_label};
use super::vary::{self, Vary};

/// An error in a lesson file, naming the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {reason}")]
pub struct LessonError {
    /// The file (as the catalog names it).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong and what is expected.
    pub reason: String,
}

impl LessonError {
    /// An error at a line.
    pub fn new(file: &str, line: usize, reason: impl Into<String>) -> Self {
        LessonError {
            file: file.to_string(),
            line,
            reason: reason.into(),
        }
    }
}

/// A fenced block: its info string, the line of its opening fence and its lines.
struct Block {
    info: String,
    line: usize,
    body: Vec<(usize, String)>,
}

/// `**Label:** rest` or `Label: rest` → rest.
fn labelled<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    let t = line.trim();
    let bold = format!("**{label}:**");
    let plain = format!("{label}:");
    t.strip_prefix(bold.as_str())
        .or_else(|| t.strip_prefix(plain.as_str()))
        .map(str::trim)
}

/// `## Step N · title` (also `-`, `:` or `—` as the separator) → (N, title).
fn step_heading(rest: &str) -> Option<(u32, String)> {
    let rest = rest.strip_prefix("Step ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: u32 = digits.parse().ok()?;
    let title = rest[digits.len()..]
        .trim_start()
        .trim_start_matches(['·', '-', ':', '—'])
        .trim();
    if title.is_empty() {
        return None;
    }
    Some((n, title.to_string()))
}

struct Meta {
    line: usize,
    version: u32,
    id: String,
    title: String,
    chapter: u32,
    vary: Vary,
}

fn parse_meta(file: &str, b: &Block) -> Result<Meta, LessonError> {
    let mut version = None;
    let mut id = None;
    let mut title = None;
    let mut chapter = None;
    let mut vary = Vary::default();
    for (n, l) in &b.body {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            return Err(LessonError::new(
                file,
                *n,
                format!("expected `key: value` in the ```lesson block, got `{t}`"),
            ));
        };
        let v = v.trim().to_string();
        match k.trim() {
            "format_version" => {
                let parsed = v.parse::<u32>().ok().filter(|x| *x > 0).ok_or_else(|| {
                    LessonError::new(
                        file,
                        *n,
                        format!("format_version must be a whole number from 1, got {v:?}"),
                    )
                })?;
                if parsed > FORMAT_VERSION {
                    return Err(LessonError::new(
                        file,
                        *n,
                        format!(
                            "format_version {parsed} is newer than this lab understands ({FORMAT_VERSION}): upgrade the lab to play this lesson"
                        ),
                    ));
                }
                version = Some(parsed);
            }
            "id" => id = Some(v),
            vary::KEY => vary.declare(file, *n, &v)?,
            "title" => title = Some(v),
            "chapter" => {
                chapter = Some(v.parse::<u32>().map_err(|_| {
                    LessonError::new(file, *n, format!("chapter must be a number, got {v:?}"))
                })?)
            }
            other => {
                return Err(LessonError::new(
                    file,
                    *n,
                    format!(
                        "unknown key `{other}` in the ```lesson block (known: format_version, id, title, chapter, vary)"
                    ),
                ));
            }
        }
    }
    let missing =
        |k: &str| LessonError::new(file, b.line, format!("the ```lesson block has no `{k}`"));
    Ok(Meta {
        line: b.line,
        version: version.ok_or_else(|| missing("format_version"))?,
        id: id.ok_or_else(|| missing("id"))?,
        title: title.ok_or_else(|| missing("title"))?,
        chapter: chapter.ok_or_else(|| missing("chapter"))?,
        vary,
    })
}

fn parse_quiz(file: &str, b: &Block) -> Result<Quiz, LessonError> {
    let err = |line: usize, r: String| LessonError::new(file, line, r);
    let predict = b.info == "predict";
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut options: Vec<(char, String)> = Vec::new();
    // Which field a continuation line extends: Some(i) a field, None the last option.
    let mut last: Option<Option<usize>> = None;
    for (n, l) in &b.body {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        let t_opt = t.strip_prefix("- ").unwrap_or(t);
        let mut chars = t_opt.chars();
        let label = match (chars.next(), chars.next()) {
            (Some(c), Some(')')) if c.is_ascii_uppercase() && !predict => Some(c),
            _ => None,
        };
        if let Some(c) = label {
            let expected = option_label(options.len());
            if c != expected {
                return Err(err(
                    *n,
                    format!("quiz option `{c})` is out of order: expected `{expected})`"),
                ));
            }
            options.push((c, chars.as_str().trim().to_string()));
            last = Some(None);
            continue;
        }
        if let Some((k, v)) = t.split_once(':') {
            let k = k.trim();
            let known: &[&str] = if predict {
                &["question", "run", "answer", "explanation"]
            } else {
                &["question", "answer", "explanation"]
            };
            if known.contains(&k) {
                if fields.iter().any(|(f, _)| f == k) {
                    return Err(err(
                        *n,
                        format!("`{k}:` appears twice in this ```{}", b.info),
                    ));
                }
                fields.push((k.to_string(), v.trim().to_string()));
                last = Some(Some(fields.len() - 1));
                continue;
            }
        }
        match last {
            Some(Some(i)) => {
                if let Some((_, v)) = fields.get_mut(i) {
                    v.push(' ');
                    v.push_str(t);
                }
            }
            Some(None) => {
                if let Some((_, v)) = options.last_mut() {
                    v.push(' ');
                    v.push_str(t);
                }
            }
            None => {
                let form = if predict {
                    "question:, run:, answer:, explanation:"
                } else {
                    "question:, A) …, B) …, answer:, explanation:"
                };
                return Err(err(
                    *n,
                    format!(
                        "unexpected line `{t}` in a ```{} block (it reads {form})",
                        b.info
                    ),
                ));
            }
        }
    }
    let field = |k: &str| -> Result<String, LessonError> {
        fields
            .iter()
            .find(|(f, _)| f == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| err(b.line, format!("this ```{} has no `{k}:`", b.info)))
    };
    let question = field("question")?;
    let answer = field("answer")?;
    let explanation = field("explanation")?;
    let kind = if predict {
        let run = field("run")?;
        crate::command::parse(&run).map_err(|e| {
            err(
                b.line,
                format!(
                    "the `run:` command `{run}` does not parse: {}",
                    parse_error_text(&e)
                ),
            )
        })?;
        if let Some(Err(e)) = super::facts::Fact::parse(&answer) {
            return Err(err(b.line, format!("the `answer:` {e}")));
        }
        QuizKind::Predict { run, answer }
    } else {
        if options.len() < 2 {
            return Err(err(
                b.line,
                "a ```quiz needs at least two options, A) and B)".into(),
            ));
        }
        let a = answer.trim_end_matches([')', '.']).trim();
        let labels: Vec<String> = options.iter().map(|(c, _)| c.to_string()).collect();
        let Some(&(label, _)) = options.iter().find(|(c, _)| a == c.to_string()) else {
            return Err(err(
                b.line,
                format!(
                    "the quiz's answer `{answer}` is not one of its options ({})",
                    labels.join(", ")
                ),
            ));
        };
        QuizKind::Choice {
            options,
            answer: label,
        }
    };
    Ok(Quiz {
        line: b.line,
        question,
        kind,
        explanation,
    })
}

/// A parse error as one line of text (clap's first line, without `error: `).
pub(crate) fn parse_error_text(e: &crate::command::ParseError) -> String {
    let t = match e {
        crate::command::ParseError::Help(_) => "it only asks for help".to_string(),
        crate::command::ParseError::Invalid(t) => t.clone(),
    };
    let first = t.lines().next().unwrap_or("").to_string();
    first.strip_prefix("error: ").unwrap_or(&first).to_string()
}

/// Add a block that sits inside a step.
fn step_block(file: &str, step: &mut Step, b: Block) -> Result<(), LessonError> {
    match b.info.as_str() {
        "lab" => {
            for (n, l) in b.body {
                let t = l.trim();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let (expect_failure, text) = match t.strip_prefix('!') {
                    Some(rest) => (true, rest.trim_start()),
                    None => (false, t),
                };
                step.commands.push(RefCommand {
                    line: n,
                    text: text.to_string(),
                    expect_failure,
                });
            }
        }
        "check" => {
            for (n, l) in b.body {
                let t = l.trim();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let c = check::parse(n, t).map_err(|e| LessonError::new(file, n, e))?;
                step.checks.push(c);
            }
        }
        "hint" => {
            let text = b
                .body
                .iter()
                .map(|(_, l)| l.trim_end())
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string();
            step.hints.push(Hint { line: b.line, text });
        }
        "quiz" | "predict" => {
            return Err(LessonError::new(
                file,
                b.line,
                format!(
                    "a ```{} block goes after the steps (under a heading such as `## Quiz`), not inside step {}",
                    b.info, step.number
                ),
            ));
        }
        "lesson" => {
            return Err(LessonError::new(
                file,
                b.line,
                "a second ```lesson block (there is one, before the steps)",
            ));
        }
        _ => {
            step.text.push(String::new());
            for (_, l) in b.body {
                step.text.push(format!("    {l}"));
            }
            step.text.push(String::new());
        }
    }
    Ok(())
}

/// Whether a line opens (or closes) a fenced block.
fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Parse a lesson file as written (variant 0). `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Lesson, LessonError> {
    parse_variant(file, text, 0)
}

/// Parse variant `variant` of a lesson file: every `${name}` outside the ```lesson block
/// is replaced by the variant's value (see [`vary`]) before anything else is read, so the
/// steps, checks and quizzes are the variant's own, and each choice quiz's options are
/// shown in the variant's order ([`vary::option_order`]). A variant the lesson does not
/// have is an error at the ```lesson block.
pub fn parse_variant(file: &str, text: &str, variant: u32) -> Result<Lesson, LessonError> {
    // The ```lesson block comes first; without one, the parser says what is missing.
    let lines: Vec<&str> = text.lines().collect();
    let Some(open) = lines.iter().position(|l| is_fence(l)) else {
        return parse_text(file, text);
    };
    let close = lines[open + 1..]
        .iter()
        .position(|l| is_fence(l))
        .map(|i| open + 1 + i);
    let (Some(close), "lesson") = (close, lines[open].trim().trim_matches(['`', '~']).trim())
    else {
        return parse_text(file, text);
    };
    let head = Block {
        info: "lesson".into(),
        line: open + 1,
        body: (open + 1..close)
            .map(|i| (i + 1, lines[i].to_string()))
            .collect(),
    };
    let meta = parse_meta(file, &head)?;
    let values = meta
        .vary
        .values(variant)
        .map_err(|e| LessonError::new(file, meta.line, format!("no variant {variant}: {e}")))?;
    let mut out = String::with_capacity(text.len());
    for (i, l) in lines.iter().enumerate() {
        if (open..=close).contains(&i) {
            out.push_str(l);
        } else {
            out.push_str(&vary::substitute(file, i + 1, l, &values)?);
        }
        out.push('\n');
    }
    let mut lesson = parse_text(file, &out)?;
    for (i, quiz) in lesson.quizzes.iter_mut().enumerate() {
        if let QuizKind::Choice { options, .. } = &quiz.kind {
            let order = vary::option_order(&lesson.id, variant, i, options.len());
            quiz.reorder_options(&order);
        }
    }
    if variant != 0 {
        spread_one_letter(&mut lesson.quizzes);
    }
    lesson.vary = meta.vary;
    lesson.variant = variant;
    Ok(lesson)
}

/// A variant whose choice quizzes all have the same answer letter (a shuffle can land
/// there: four quizzes of three options do one time in twenty-seven) would pass "always
/// C": the last choice quiz's options are rotated by one, so its answer takes the next
/// letter.
fn spread_one_letter(quizzes: &mut [Quiz]) {
    let answers: Vec<(usize, char, usize)> = quizzes
        .iter()
        .enumerate()
        .filter_map(|(i, q)| match &q.kind {
            QuizKind::Choice { options, answer } => Some((i, *answer, options.len())),
            QuizKind::Predict { .. } => None,
        })
        .collect();
    let one_letter = answers.len() > 1 && answers.iter().all(|(_, a, _)| *a == answers[0].1);
    if let (true, Some(&(last, _, count))) = (one_letter, answers.last()) {
        // Shown at position p: the option that was at p - 1 (the last one first).
        let rotated: Vec<usize> = (0..count).map(|p| (p + count - 1) % count).collect();
        quizzes[last].reorder_options(&rotated);
    }
}

/// Parse a lesson file whose variables are filled in.
fn parse_text(file: &str, text: &str) -> Result<Lesson, LessonError> {
    let mut meta: Option<Meta> = None;
    let mut steps: Vec<Step> = Vec::new();
    let mut quizzes: Vec<Quiz> = Vec::new();
    let mut cur: Option<Step> = None;
    // Inside the task's paragraph (its wrapped lines belong to it).
    let mut in_task = false;
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        // A fenced block: read it whole.
        let fence_char = if trimmed.starts_with("```") {
            Some('`')
        } else if trimmed.starts_with("~~~") {
            Some('~')
        } else {
            None
        };
        if let Some(fc) = fence_char {
            in_task = false;
            let width = trimmed.chars().take_while(|c| *c == fc).count();
            let info = trimmed[width..].trim().to_string();
            let mut body = Vec::new();
            let mut closed = false;
            for (m, l) in lines.by_ref() {
                let t = l.trim();
                if t.len() >= width && t.chars().all(|c| c == fc) {
                    closed = true;
                    break;
                }
                body.push((m, l.to_string()));
            }
            if !closed {
                return Err(LessonError::new(
                    file,
                    n,
                    format!("this {} block is never closed", "`".repeat(3)),
                ));
            }
            let b = Block {
                info,
                line: n,
                body,
            };
            if meta.is_none() {
                if b.info != "lesson" {
                    return Err(LessonError::new(
                        file,
                        n,
                        "the first fenced block must be ```lesson with format_version, id, title and chapter",
                    ));
                }
                meta = Some(parse_meta(file, &b)?);
                continue;
            }
            match cur.as_mut() {
                Some(step) => step_block(file, step, b)?,
                None => match b.info.as_str() {
                    "quiz" | "predict" => quizzes.push(parse_quiz(file, &b)?),
                    "lab" | "check" | "hint" => {
                        return Err(LessonError::new(
                            file,
                            n,
                            format!(
                                "a ```{} block outside a step (it belongs under a `## Step N · title` heading)",
                                b.info
                            ),
                        ));
                    }
                    "lesson" => {
                        return Err(LessonError::new(
                            file,
                            n,
                            "a second ```lesson block (there is one, before the steps)",
                        ));
                    }
                    _ => {}
                },
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("## ") {
            in_task = false;
            if let Some(step) = cur.take() {
                steps.push(step);
            }
            if rest.starts_with("Step") {
                if meta.is_none() {
                    return Err(LessonError::new(
                        file,
                        n,
                        "a step before the ```lesson block (it comes first, with format_version, id, title and chapter)",
                    ));
                }
                let Some((number, title)) = step_heading(rest) else {
                    return Err(LessonError::new(
                        file,
                        n,
                        format!(
                            "a step heading reads `## Step N · title`, got `{}`",
                            line.trim()
                        ),
                    ));
                };
                let expected = u32::try_from(steps.len() + 1).unwrap_or(u32::MAX);
                if number != expected {
                    return Err(LessonError::new(
                        file,
                        n,
                        format!(
                            "this is step {number} but step {expected} was expected (steps are numbered 1, 2, 3, … in order)"
                        ),
                    ));
                }
                if !quizzes.is_empty() {
                    return Err(LessonError::new(
                        file,
                        n,
                        "a step after the quizzes (quizzes come at the end)",
                    ));
                }
                cur = Some(Step {
                    number,
                    title,
                    line: n,
                    section: None,
                    dashboard: None,
                    text: Vec::new(),
                    task: None,
                    commands: Vec::new(),
                    checks: Vec::new(),
                    hints: Vec::new(),
                });
            }
            continue;
        }
        if let Some(step) = cur.as_mut() {
            if in_task && !trimmed.is_empty() && !trimmed.starts_with('#') {
                // The task sentence continues (a Markdown paragraph wraps).
                if let Some(t) = step.task.as_mut() {
                    t.push(' ');
                    t.push_str(trimmed.trim_end());
                }
                continue;
            }
            in_task = false;
            if trimmed.starts_with('#') {
                // A deeper heading inside a step is teaching text.
                step.text
                    .push(trimmed.trim_start_matches('#').trim().to_string());
            } else if let Some(s) = labelled(line, "Section").filter(|_| step.section.is_none()) {
                step.section = Some(s.to_string());
            } else if let Some(d) = labelled(line, "Dashboard").filter(|_| step.dashboard.is_none())
            {
                let pane =
                    super::focus::FocusPane::parse(d).map_err(|e| LessonError::new(file, n, e))?;
                step.dashboard = Some(pane);
            } else if let Some(t) = labelled(line, "Task").filter(|_| step.task.is_none()) {
                step.task = Some(t.to_string());
                in_task = true;
            } else {
                step.text.push(line.trim_end().to_string());
            }
        }
    }
    if let Some(step) = cur.take() {
        steps.push(step);
    }
    let Some(meta) = meta else {
        return Err(LessonError::new(
            file,
            1,
            "no ```lesson block: a lesson starts with one (format_version, id, title, chapter)",
        ));
    };
    if steps.is_empty() {
        return Err(LessonError::new(
            file,
            meta.line,
            "the lesson has no steps (`## Step 1 · title`)",
        ));
    }
    for s in &mut steps {
        trim_blank(&mut s.text);
    }
    Ok(Lesson {
        file: file.to_string(),
        format_version: meta.version,
        id: meta.id,
        title: meta.title,
        chapter: meta.chapter,
        meta_line: meta.line,
        vary: meta.vary,
        variant: 0,
        steps,
        quizzes,
    })
}

/// Drop leading and trailing blank lines and collapse runs of blank lines.
fn trim_blank(text: &mut Vec<String>) {
    let mut out: Vec<String> = Vec::new();
    for l in text.drain(..) {
        if l.trim().is_empty() && out.last().is_none_or(|p| p.trim().is_empty()) {
            continue;
        }
        out.push(l);
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    *text = out;
}
