//! What a parsed lesson is: metadata, steps and quizzes, each remembering the line it came
//! from so every error can name `file:line`.

use super::check::Check;
use super::focus::FocusPane;

/// A lesson as the player and the linter see it (one Markdown file under `lessons/`).
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    /// The file it came from (`lessons/ch7-hands-on.md`), for error messages.
    pub file: String,
    /// The `format_version` it declares.
    pub format_version: u32,
    /// Slug (`ch7-hands-on`), unique across lessons.
    pub id: String,
    /// Title shown in `lesson list`.
    pub title: String,
    /// The handbook chapter it follows (2..7).
    pub chapter: u32,
    /// Line of the metadata block.
    pub meta_line: usize,
    /// The variables its variants change (none: the lesson has one variant).
    pub vary: super::vary::Vary,
    /// Which variant this is (0: the lesson as written).
    pub variant: u32,
    /// The steps, in order (`## Step 1 · …`, `## Step 2 · …`).
    pub steps: Vec<Step>,
    /// The quizzes after the steps, in order.
    pub quizzes: Vec<Quiz>,
}

/// One step: teaching text, a task, reference commands, a check and hints.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// 1-based number from the heading.
    pub number: u32,
    /// Title from the heading.
    pub title: String,
    /// Line of the heading.
    pub line: usize,
    /// The handbook section it follows (`7.4 scenario 1`), from the `Section:` line.
    pub section: Option<String>,
    /// The dashboard pane the step is about, from its `Dashboard:` line, where its checks
    /// cannot say it ([`super::focus`]).
    pub dashboard: Option<FocusPane>,
    /// Teaching text: the step's prose, Markdown as written.
    pub text: Vec<String>,
    /// The task sentence (`**Task:** …`).
    pub task: Option<String>,
    /// The reference commands (```lab blocks).
    pub commands: Vec<RefCommand>,
    /// The check (```check blocks): every predicate must hold.
    pub checks: Vec<Check>,
    /// Hints (one per ```hint block), given in order by `hint`, cycling.
    pub hints: Vec<Hint>,
}

/// One reference command from a ```lab block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefCommand {
    /// Line in the file.
    pub line: usize,
    /// The command as the learner would type it (without a leading `!`).
    pub text: String,
    /// A leading `!`: the command is meant to fail (as in scripts).
    pub expect_failure: bool,
}

/// One hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// Line of the block.
    pub line: usize,
    /// The text.
    pub text: String,
}

/// A quiz after the steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quiz {
    /// Line of the block.
    pub line: usize,
    /// The question.
    pub question: String,
    /// What kind, with its answer.
    pub kind: QuizKind,
    /// Shown after the learner answers.
    pub explanation: String,
}

/// The two kinds of quiz.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuizKind {
    /// Multiple choice: options labelled A, B, …; `answer` is a label.
    Choice {
        /// (label, text), in order.
        options: Vec<(char, String)>,
        /// The right label.
        answer: char,
    },
    /// Predict, then run: the learner types a prediction, the lab runs `run` and compares
    /// the prediction with `answer` (which the linter proves appears in `run`'s output).
    Predict {
        /// The command the lab runs after the prediction.
        run: String,
        /// The expected answer.
        answer: String,
    },
}

impl Lesson {
    /// Steps plus quizzes: what the progress bar counts.
    pub fn item_count(&self) -> usize {
        self.steps.len() + self.quizzes.len()
    }
}

/// The label of a choice quiz's option at `index` (0: `A`; labels are the letters A to Z).
pub(crate) fn option_label(index: usize) -> char {
    char::from(b'A' + u8::try_from(index).unwrap_or(25))
}

impl Quiz {
    /// Show a choice quiz's options in `order` (a permutation of their indices: for each
    /// position, the index of the option shown there), relabelled A, B, … in that order,
    /// the answer moving with its option; a predict quiz is left as it is.
    pub fn reorder_options(&mut self, order: &[usize]) {
        let QuizKind::Choice { options, answer } = &mut self.kind else {
            return;
        };
        let right = options.iter().position(|(label, _)| label == answer);
        let reordered: Vec<(char, String)> = order
            .iter()
            .enumerate()
            .map(|(at, from)| (option_label(at), options[*from].1.clone()))
            .collect();
        if let Some(at) = right.and_then(|r| order.iter().position(|from| *from == r)) {
            *answer = option_label(at);
        }
        *options = reordered;
    }

    /// Why `given` is not an answer to this quiz at all (a choice quiz takes one of its
    /// labels: `A`, `b)`, `(C)`), naming what is accepted; `None` when it is one.
    pub fn refuse(&self, given: &str) -> Option<String> {
        let QuizKind::Choice { options, .. } = &self.kind else {
            return self.refuse_prediction(given);
        };
        if chosen(given, options).is_some() {
            return None;
        }
        Some(format!(
            "{:?} is not one of this quiz's options: {}; this try is not used",
            given.trim(),
            self.accepted()
        ))
    }

    /// What `lesson answer` takes for this quiz: `answer A, B or C (`lesson answer
    /// LETTER`)`, or the prediction's options.
    pub fn accepted(&self) -> String {
        match &self.kind {
            QuizKind::Choice { options, .. } => {
                let labels: Vec<String> = options.iter().map(|(l, _)| l.to_string()).collect();
                let list = match labels.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => labels.join(""),
                };
                format!("answer {list} (`lesson answer LETTER`)")
            }
            QuizKind::Predict { .. } => format!(
                "{} (`lesson answer PREDICTION`)",
                prediction_accepted(&self.question)
            ),
        }
    }

    /// Why the prediction `given` states no single answer (it negates or hedges, or names
    /// more than one of the question's options), naming what is accepted; `None` when it
    /// states one. Like a choice answer that is no option, it uses no try.
    fn refuse_prediction(&self, given: &str) -> Option<String> {
        let accepted = prediction_accepted(&self.question);
        let wants_address = match &self.kind {
            QuizKind::Predict { answer, .. } => names_an_address(answer),
            QuizKind::Choice { .. } => false,
        };
        let why = match prediction_flaw(&self.question, given, wants_address)? {
            Flaw::Hedges(word) => format!("negates or hedges ({word:?})"),
            Flaw::SeveralOptions => "names more than one of this quiz's options".to_string(),
            Flaw::SeveralAddresses => "names more than one address".to_string(),
            Flaw::Asks => "asks (\"?\") instead of stating an answer".to_string(),
            Flaw::NoOption => "names none of this quiz's options".to_string(),
            Flaw::NoAddress => "names no address, and the question asks for one".to_string(),
            Flaw::Network => {
                "names a network (a prefix length), and a next hop is one address".to_string()
            }
        };
        Some(format!(
            "{:?} {why}: {accepted} (`lesson answer PREDICTION`); this try is not used",
            given.trim()
        ))
    }

    /// Whether `given` is the right answer (case and surrounding space ignored; a choice
    /// may be given as `B`, `b` or `B)`).
    pub fn is_right(&self, given: &str) -> bool {
        let given = given.trim();
        match &self.kind {
            QuizKind::Choice { answer, options } => chosen(given, options) == Some(*answer),
            QuizKind::Predict { answer, .. } => predicted(&self.question, given, answer.trim()),
        }
    }
}

/// What a prediction to `question` must do: name one of its options, or state one answer.
fn prediction_accepted(question: &str) -> String {
    let options = question_options(question);
    let quoted: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!("a prediction names one of {} or {last}", rest.join(", "))
        }
        _ => "a prediction states one answer".to_string(),
    }
}

/// The options a prediction's question offers, when it offers some: backticked names
/// joined by `,` and `or` (`Which runs first: `CNI DEL` or `NodeUnpublishVolume`?`).
fn question_options(question: &str) -> Vec<&str> {
    // Odd indices are inside backticks (closed when text follows: `a`b` is unclosed); the
    // text between two spans joins them.
    let parts: Vec<&str> = question.split('`').collect();
    let mut run: Vec<&str> = Vec::new();
    let mut joined_by_or = false;
    for i in (1..parts.len().saturating_sub(1)).step_by(2) {
        run.push(parts[i]);
        let gap = parts[i + 1].trim();
        if i + 3 < parts.len() && matches!(gap, "," | "or" | ", or") {
            joined_by_or |= gap != ",";
            continue;
        }
        if joined_by_or && run.len() >= 2 {
            return run;
        }
        run.clear();
        joined_by_or = false;
    }
    Vec::new()
}

/// Whether a prediction gives the answer, as [`same_prediction`] reads it, or, when the
/// question offers options (`` `A` or `B` ``), names the answer's option and no other:
/// `CNI DEL runs first` and `it is ok` give one option. A prediction that negates or hedges
/// (`not ok`, `maybe ok`) or names two options (`ok error`) gives none ([`prediction_flaw`]),
/// except one option then another when the question asks which comes first (`CNI DEL then
/// NodeUnpublishVolume`).
pub(crate) fn predicted(question: &str, given: &str, answer: &str) -> bool {
    if prediction_flaw(question, given, names_an_address(answer)).is_some() {
        return false;
    }
    // The answer without its reason (whose words may negate something else).
    if same_prediction(given, answer) || same_prediction(hedge_scope(question, given), answer) {
        return true;
    }
    let options = question_options(question);
    let words = prediction_words(given);
    let named = options_named(&words, &options);
    // `X after Y` (the only other option named) states Y first.
    let stated = match named.as_slice() {
        [_, (at, second)] if asks_order(question) && words[at - 1] == "after" => Some(second),
        _ => named.first().map(|(_, o)| o),
    };
    stated.is_some_and(|o| same_prediction(o, answer))
}

/// Whether the question asks which comes first (so a prediction may name the options in
/// order: `CNI DEL then NodeUnpublishVolume`).
fn asks_order(question: &str) -> bool {
    question
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("first"))
}

/// Whether a prediction's answer is an address: one written out, or a fact the lab reads
/// (`{pod web ip}`, `{lease c3 on node-1}`: every fact is an address).
fn names_an_address(answer: &str) -> bool {
    answer.trim().parse::<std::net::IpAddr>().is_ok()
        || matches!(super::facts::Fact::parse(answer), Some(Ok(_)))
}

/// The address a prediction's word holds (`10.244.1.7`, `10.244.1.7/24`), if any.
fn word_address(word: &str) -> Option<std::net::IpAddr> {
    word.split_once('/').map_or(word, |(a, _)| a).parse().ok()
}

/// Why a prediction states no single answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Flaw {
    /// It negates or hedges: the word that does (`not`, `or`, `maybe`, `isn't`).
    Hedges(String),
    /// It names two of the question's options, not as one then the other.
    SeveralOptions,
    /// It names two addresses (`10.244.1.7, after 10.244.1.6`; `10.244.1.8 else .9`, the
    /// second shortened): which one is its answer?
    SeveralAddresses,
    /// It asks: a question mark on the answer (`ok?`, `10.244.1.7?`).
    Asks,
    /// It names none of the question's options (`deny` for `allowed` or `denied`).
    NoOption,
    /// The question asks for an address and it names none (`A`, `the next one`).
    NoAddress,
    /// The question asks for a next hop, one address, and it names a network
    /// (`10.244.3.0/24`, the destination the question gives).
    Network,
}

/// Words that negate or hedge: a prediction with one states no single answer.
const HEDGES: &[&str] = &[
    "or",
    "else",
    "otherwise",
    "either",
    "neither",
    "nor",
    "not",
    "no",
    "never",
    "cannot",
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "likely",
    "could",
    "depends",
    "alternatively",
    "roughly",
    "approximately",
    "~",
    "might",
    "unsure",
    "guess",
    "unless",
    // Contractions whose apostrophe a shell-like line dropped (`don't … won't` pair up).
    "dont",
    "doesnt",
    "isnt",
    "arent",
    "wont",
    "cant",
    "didnt",
    "wasnt",
    "werent",
    "shouldnt",
    "wouldnt",
    "couldnt",
];

/// Whether a prediction's word negates or hedges: one of [`HEDGES`], or a contraction
/// with `n't` (either apostrophe).
fn is_hedge(word: &str) -> bool {
    HEDGES.contains(&word) || word.ends_with("n't") || word.ends_with("n\u{2019}t")
}

/// The parts of a word written without spaces that name one thing each: `,` and `;` part
/// them (`ok,error`, `10.244.1.7;10.244.1.8`), and so does one `:` (`10.244.1.7:.8`), but
/// not the colons of an IPv6 address.
fn split_joined(word: &str) -> Vec<&str> {
    word.split([',', ';'])
        .flat_map(|w| match w.split_once(':') {
            Some((a, b)) if !b.contains(':') => vec![a, b],
            _ => vec![w],
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The words of a prediction, lowercase, without the punctuation around them; `/` parts
/// words (`ok/error`), except in an address with its prefix (`10.244.1.3/24`), and so do
/// `,`, `;` and a `:` written without a space ([`split_joined`]).
fn prediction_words(given: &str) -> Vec<String> {
    given
        .split_whitespace()
        .flat_map(split_joined)
        .flat_map(|w| {
            let address = w.split_once('/').is_some_and(|(a, _)| {
                a.trim_matches(|c: char| !c.is_ascii_alphanumeric())
                    .parse::<std::net::IpAddr>()
                    .is_ok()
            });
            if address {
                vec![w]
            } else {
                w.split('/').collect()
            }
        })
        .map(|w| {
            w.trim_matches(|c: char| {
                matches!(
                    c,
                    ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')' | '[' | ']' | '`' | '"' | '\''
                )
            })
            .to_ascii_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// What keeps a prediction from stating one answer, if anything: a word that negates or
/// hedges, or, for a question with options, a second option named other than after `then`
/// or `before` in a question that asks which comes first.
fn prediction_flaw(question: &str, given: &str, wants_address: bool) -> Option<Flaw> {
    let words = prediction_words(given);
    let scope = hedge_scope(question, given);
    if let Some(w) = prediction_words(scope).into_iter().find(|w| is_hedge(w)) {
        return Some(Flaw::Hedges(w));
    }
    // Two answers with a slash between (`ok/fail`), but not an address with its prefix
    // or a path (`/csi.v1.Node/NodeUnpublishVolume`).
    let slashed = |w: &str| {
        !w.starts_with('/')
            && w.split('/').filter(|p| !p.is_empty()).count() > 1
            && word_address(w).is_none()
    };
    if scope.split_whitespace().any(slashed) {
        return Some(Flaw::Hedges("/".into()));
    }
    if scope.contains('?') {
        return Some(Flaw::Asks);
    }
    let mut addresses = words.iter().filter_map(|w| word_address(w));
    if let Some(first) = addresses.next()
        && (addresses.any(|a| a != first)
            || names_a_shortened_address(given, first)
            || words.iter().any(|w| slash_names_another_address(w)))
    {
        return Some(Flaw::SeveralAddresses);
    }
    if wants_address && !words.iter().any(|w| word_address(w).is_some()) {
        return Some(Flaw::NoAddress);
    }
    if question.to_ascii_lowercase().contains("next hop")
        && words
            .iter()
            .any(|w| word_address(w).is_some() && w.contains('/'))
    {
        return Some(Flaw::Network);
    }
    let options = question_options(question);
    let named = options_named(&words, &options);
    let Some((_, first)) = named.first() else {
        return (!options.is_empty()).then_some(Flaw::NoOption);
    };
    let asks_order = asks_order(question);
    // Every option of three or more, each once, in a question that asks which comes first:
    // a whole order (`bandwidth, portmap, bridge`), whose first is the answer. (Two options
    // side by side, `CNI DEL NodeUnpublishVolume`, still read as both.)
    let mut distinct: Vec<&str> = named.iter().map(|(_, o)| *o).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let whole_order = asks_order
        && options.len() >= 3
        && !given.contains('/')
        && named.len() == options.len()
        && distinct.len() == options.len();
    if whole_order {
        return None;
    }
    // `X then Y`, `X before Y`, `X first, Y second`, and `Y after X` (one other option).
    let in_order = |at: usize| {
        asks_order
            && at > 0
            && (matches!(words[at - 1].as_str(), "then" | "before" | "first")
                || (named.len() == 2 && words[at - 1] == "after"))
    };
    if named.iter().any(|(at, o)| o != first && !in_order(*at)) {
        return Some(Flaw::SeveralOptions);
    }
    None
}

/// Whether a word `ADDRESS/REST` names a second address after its slash (`10.244.1.8/9`,
/// `10.244.1.8/10.244.1.9`, `10.244.1.8/1.9`) rather than a prefix length a pod's address
/// is written with (`/24`, `/26`, `/32`: 16 to 32 for IPv4, 48 to 128 for IPv6). `/9` is
/// a prefix no pod network has: it reads as `.8 or .9`.
fn slash_names_another_address(word: &str) -> bool {
    let Some((address, rest)) = word.split_once('/') else {
        return false;
    };
    let Ok(address) = address.parse::<std::net::IpAddr>() else {
        return false;
    };
    let rest = rest.trim_start_matches('.');
    match rest.parse::<u8>() {
        Ok(len) if address.is_ipv4() => !(16..=32).contains(&len),
        Ok(len) => !(48..=128).contains(&len),
        Err(_) => {
            rest.parse::<std::net::IpAddr>().is_ok()
                || rest.split('.').all(|p| p.parse::<u8>().is_ok())
        }
    }
}

/// Whether a prediction that names the address `first` names another one shortened, as a
/// person writes a second address in the same network: its last parts after a dot (`.9`,
/// `1.9`, `.1.9`: `10.244.1.8 else .9`, `10.244.1.8, .9`), or its last part alone after a
/// word that joins two answers (`10.244.1.8 and 9`). The tail of `first` itself
/// (`10.244.1.8, .8`) is the same address, and a number with a unit after it (`after 1.5
/// s`, `2.5 GiB`) is a quantity.
fn names_a_shortened_address(given: &str, first: std::net::IpAddr) -> bool {
    const JOINS: &[&str] = &["and", "or", "else", "then", "&", "+", "vs"];
    const UNITS: &[&str] = &[
        "s", "sec", "secs", "second", "seconds", "ms", "min", "mins", "minute", "minutes", "h",
        "hour", "hours", "x", "%", "percent", "times", "k", "ki", "kib", "kb", "m", "mi", "mib",
        "mb", "g", "gi", "gib", "gb",
    ];
    let first = first.to_string();
    let is_tail = |t: &str| first.ends_with(&format!(".{}", t.trim_start_matches('.')));
    let tokens: Vec<&str> = given
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ',' | ';' | '/' | '(' | ')' | '[' | ']' | '`' | '"' | '\'' | '\u{2014}'
                )
        })
        .flat_map(split_joined)
        .map(|t| t.trim_end_matches(['.', '?', '!', ':']))
        .filter(|t| !t.is_empty())
        .collect();
    let octets = |t: &str| {
        let parts: Vec<&str> = t.split('.').collect();
        (1..=3).contains(&parts.len())
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.len() <= 3 && p.parse::<u8>().is_ok())
    };
    tokens.iter().enumerate().any(|(at, t)| {
        let shortened = match t.strip_prefix('.') {
            Some(rest) => octets(rest),
            None => t.contains('.') && octets(t),
        };
        let after_a_join =
            at > 0 && JOINS.contains(&tokens[at - 1].to_ascii_lowercase().as_str()) && octets(t);
        let quantity = tokens
            .get(at + 1)
            .is_some_and(|unit| UNITS.contains(&unit.to_ascii_lowercase().as_str()));
        (shortened || after_a_join) && !is_tail(t) && !quantity
    })
}

/// The part of a prediction where a negation or hedge is about the answer: all of it, but
/// a reason given after it. The answer is the clauses (split at `,` `;` `:` `—` and a
/// full stop) up to the first that names one of the question's options or an address;
/// what follows is its reason, whose `not` is about something else (`Running, RWO is per
/// node, not per pod`), unless the reason opens with a hedge (`ok, probably`, `ok, not
/// error`). A second option or address in the reason is still counted
/// ([`prediction_flaw`]).
fn hedge_scope<'g>(question: &str, given: &'g str) -> &'g str {
    let options = question_options(question);
    let names_answer = |clause: &str| {
        let words = prediction_words(clause);
        words.iter().any(|w| word_address(w).is_some())
            || !options_named(&words, &options).is_empty()
    };
    let mut start = 0;
    for (at, c) in given.char_indices() {
        let full_stop = c == '.' && given[at + 1..].starts_with(char::is_whitespace);
        if !(matches!(c, ',' | ';' | ':' | '\u{2014}') || full_stop) {
            continue;
        }
        let (answer, reason) = (&given[..at], &given[at + c.len_utf8()..]);
        if names_answer(&given[start..at]) {
            let opens_with_hedge = prediction_words(reason)
                .first()
                .is_some_and(|w| is_hedge(w));
            return if opens_with_hedge { given } else { answer };
        }
        start = at + c.len_utf8();
    }
    given
}

/// The options `words` name, in order, each with the index of its first word: at each
/// word, the longest run of up to four words that names one.
fn options_named<'q>(words: &[String], options: &[&'q str]) -> Vec<(usize, &'q str)> {
    let mut named = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let found = (1..=4.min(words.len() - at)).rev().find_map(|len| {
            let span = words[at..at + len].join(" ");
            options
                .iter()
                .find(|o| same_prediction(&span, o))
                .map(|o| (len, *o))
        });
        match found {
            Some((len, o)) => {
                named.push((at, o));
                at += len;
            }
            None => at += 1,
        }
    }
    named
}

/// The option a choice answer names: by its label ([`choice_label`]), or by the option's
/// whole text as the quiz prints it (case, spacing, backticks and a final full stop aside).
fn chosen(given: &str, options: &[(char, String)]) -> Option<char> {
    if let Some(c) = choice_label(given).filter(|c| options.iter().any(|(l, _)| l == c)) {
        return Some(c);
    }
    let plain = |t: &str| {
        t.replace('`', "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end_matches('.')
            .to_lowercase()
    };
    let given = plain(given);
    options
        .iter()
        .find(|(_, text)| !given.is_empty() && plain(text) == given)
        .map(|(l, _)| *l)
}

/// The option label a choice answer names (`b`, `B)`, `(B)`, `B.` → `B`), if it is one
/// letter or digit.
fn choice_label(given: &str) -> Option<char> {
    let g = given.trim().trim_end_matches([')', '.', ':']).trim();
    let g = g.strip_prefix('(').unwrap_or(g);
    let mut chars = g.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c.to_ascii_uppercase()),
        _ => None,
    }
}

/// Whether a prediction says what the answer says, as an engineer would write it: case,
/// quotes, backticks and a final full stop do not matter; an address may carry its prefix
/// (`10.244.1.3/24` for `10.244.1.3`); an RPC may drop `Volume` (`NodeUnpublish`); success
/// may be said as `ok`, `OK`, `success`, `succeeds` or `0`; a CNI command may drop `CNI`
/// (`DEL` for `CNI DEL`); a next hop may be written as a route writes it (`via 10.244.3.0`
/// for `10.244.3.0`).
pub(crate) fn same_prediction(given: &str, answer: &str) -> bool {
    fn clean(s: &str) -> String {
        s.trim()
            .trim_end_matches('.')
            .trim_matches(|c| matches!(c, '`' | '"' | '\''))
            .trim()
            .to_ascii_lowercase()
    }
    let (g, a) = (clean(given), clean(answer));
    if g == a {
        return true;
    }
    // The answer with words around it that name no other answer: `the bandwidth plugin`,
    // `a NodeUnpublishVolume call`.
    const FILLER: &[&str] = &["the", "a", "an", "plugin", "call", "rpc", "first"];
    let words: Vec<&str> = g
        .split_whitespace()
        .filter(|w| !FILLER.contains(w))
        .collect();
    if words.len() < g.split_whitespace().count() {
        return same_prediction(&words.join(" "), answer);
    }
    // An address, with words around it that name no other address and do not hedge: a
    // next hop as a route writes it (`via 10.244.3.0`), or with a remark (`10.244.3.0
    // (onlink via flannel.1)`).
    if a.parse::<std::net::IpAddr>().is_ok() && g.split_whitespace().count() > 1 {
        return address_among_words(&g, &a);
    }
    let ok = |s: &str| {
        matches!(
            s,
            "ok" | "okay" | "success" | "succeeds" | "succeeded" | "0" | "exit 0"
        )
    };
    if ok(&g) && ok(&a) {
        return true;
    }
    // An address with its prefix length, when the answer is the bare address.
    if a.parse::<std::net::IpAddr>().is_ok()
        && let Some((addr, len)) = g.split_once('/')
        && addr == a
        && len.parse::<u8>().is_ok()
    {
        return true;
    }
    // A CNI command without the `CNI` before it (`DEL` for `CNI DEL`): the command names
    // only that.
    const CNI_COMMANDS: &[&str] = &["add", "del", "check", "gc", "status", "version"];
    if let Some(command) = a.strip_prefix("cni ")
        && CNI_COMMANDS.contains(&command)
        && g == command
    {
        return true;
    }
    // An RPC without its `Volume` suffix (`nodeunpublish` for `nodeunpublishvolume`).
    a.ends_with("volume") && a.len() > 6 && g == a[..a.len() - 6]
}

/// Whether a prediction of several words gives the address `answer` (both lowercase):
/// one word is the address (or it with a prefix length), no other word is an address or a
/// prefix, and none hedges or negates (`or`, `either`, `not`, `no`, `maybe`).
fn address_among_words(given: &str, answer: &str) -> bool {
    const HEDGES: &[&str] = &["or", "either", "not", "no", "maybe", "nor"];
    let is_address = |w: &str| {
        let addr = w.split_once('/').map_or(w, |(addr, _)| addr);
        addr.parse::<std::net::IpAddr>().is_ok()
    };
    let words: Vec<&str> = given
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| {
                matches!(
                    c,
                    ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')' | '[' | ']' | '`' | '"' | '\''
                )
            })
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut gives = false;
    for w in words {
        if HEDGES.contains(&w) {
            return false;
        }
        if is_address(w) {
            if !same_prediction(w, answer) {
                return false;
            }
            gives = true;
        }
    }
    gives
}

#[cfg(test)]
mod tests {
    use super::{
        Flaw, Quiz, QuizKind, predicted, prediction_flaw, question_options, same_prediction,
    };

    #[test]
    fn reordered_options_are_relabelled_and_the_answer_moves_with_its_option() {
        let options = |texts: &[&str]| -> Vec<(char, String)> {
            ('A'..).zip(texts.iter().map(|t| t.to_string())).collect()
        };
        let mut quiz = Quiz {
            line: 1,
            question: "Q?".into(),
            kind: QuizKind::Choice {
                options: options(&["one", "two", "three"]),
                answer: 'B',
            },
            explanation: "e".into(),
        };
        quiz.reorder_options(&[2, 0, 1]);
        assert_eq!(
            quiz.kind,
            QuizKind::Choice {
                options: options(&["three", "one", "two"]),
                answer: 'C',
            }
        );
        assert!(quiz.is_right("c") && !quiz.is_right("B"));
        let mut predict = Quiz {
            kind: QuizKind::Predict {
                run: "show routes node-1".into(),
                answer: "10.244.1.1".into(),
            },
            ..quiz
        };
        let before = predict.clone();
        predict.reorder_options(&[1, 0]);
        assert_eq!(predict, before);
    }

    #[test]
    fn predictions_match_as_an_engineer_writes_them() {
        for (given, answer) in [
            ("10.244.1.3", "10.244.1.3"),
            ("10.244.1.3/24", "10.244.1.3"),
            ("`10.244.1.3`.", "10.244.1.3"),
            ("succeeds", "OK"),
            ("ok", "0"),
            ("NodeUnpublish", "NodeUnpublishVolume"),
            ("nodeunpublishvolume", "NodeUnpublishVolume"),
            ("\"ALREADY_EXISTS\"", "already_exists"),
            ("the bandwidth plugin", "bandwidth"),
            ("a NodeUnpublish call", "NodeUnpublishVolume"),
            ("via 10.244.3.0", "10.244.3.0"),
            ("`via 10.244.3.0`", "10.244.3.0"),
            // QA 21 §9: an address with a remark, as the bandwidth plugin with its words.
            ("10.244.3.0 (onlink via flannel.1)", "10.244.3.0"),
            ("via 10.244.3.0 dev flannel.1 onlink", "10.244.3.0"),
            ("10.244.3.0, flannel.1's address on node-3", "10.244.3.0"),
            ("10.244.1.3/24 on eth0", "10.244.1.3"),
        ] {
            assert!(same_prediction(given, answer), "{given} for {answer}");
        }
        for (given, answer) in [
            ("10.244.1.4", "10.244.1.3"),
            ("10.244.1.3/x", "10.244.1.3"),
            ("fails", "OK"),
            ("Volume", "NodeUnpublishVolume"),
            ("NodePublish", "NodeUnpublishVolume"),
            ("the portmap plugin", "bandwidth"),
            ("bandwidth or portmap", "bandwidth"),
            ("the plugin", "bandwidth"),
            ("via 10.244.3.1", "10.244.3.0"),
            ("via 192.168.0.3", "10.244.3.0"),
            ("via", "10.244.3.0"),
            ("via bandwidth", "bandwidth"),
            ("10.244.3.0 or 10.244.3.1", "10.244.3.0"),
            ("10.244.3.1 (not 10.244.3.0)", "10.244.3.0"),
            ("not 10.244.3.0", "10.244.3.0"),
            ("10.244.3.0 via 192.168.0.3", "10.244.3.0"),
            ("flannel.1 (onlink)", "10.244.3.0"),
            ("maybe 10.244.3.0", "10.244.3.0"),
        ] {
            assert!(!same_prediction(given, answer), "{given} for {answer}");
        }
    }

    /// Issue: `CNI DEL runs first` and `CNI DEL then NodeUnpublishVolume` were marked wrong
    /// for a question offering `CNI DEL` or `NodeUnpublishVolume`, and a prediction has one
    /// try. The option named first, without an `or`, is the answer given.
    #[test]
    fn a_prediction_names_one_of_the_question_s_options() {
        let q = "Delete pod ai-agent. Which runs first: `CNI DEL` or `NodeUnpublishVolume`?";
        assert_eq!(question_options(q), ["CNI DEL", "NodeUnpublishVolume"]);
        for given in [
            "CNI DEL runs first",
            "CNI DEL then NodeUnpublishVolume",
            "CNI DEL, then NodeUnpublishVolume",
            "`CNI DEL` first",
            "DEL runs first",
            "cni del",
            "DEL",
            "CNI DEL.",
            // QA 23 §6: the order said with other words.
            "NodeUnpublishVolume after CNI DEL",
            "CNI DEL first, NodeUnpublishVolume second",
        ] {
            assert!(predicted(q, given, "CNI DEL"), "{given}");
        }
        for given in [
            "NodeUnpublishVolume runs first",
            "NodeUnpublishVolume then CNI DEL",
            "NodeUnpublish",
            "CNI DEL or NodeUnpublishVolume",
            "either CNI DEL, NodeUnpublishVolume",
            "NodeUnpublishVolume or CNI DEL",
            "ADD runs first",
            "runs first",
            "",
            // QA 22 §1: a negation, a hedge or a second option not in order.
            "not CNI DEL",
            "not DEL",
            "CNI DEL isn't first",
            "maybe CNI DEL",
            "CNI DEL NodeUnpublishVolume",
            "CNI DEL after NodeUnpublishVolume",
            "CNI DEL/NodeUnpublishVolume",
            // QA 23 §3: `don't … won't` reach the check without their apostrophes.
            "dont know, CNI DEL wont be last",
        ] {
            assert!(!predicted(q, given, "CNI DEL"), "{given}");
        }
        // Two options in order only where the question asks which comes first.
        let q = "Does the chain answer ok or an error? (Answer `ok` or `error`.)";
        assert!(predicted(q, "it is ok", "ok") && predicted(q, "OK.", "ok"));
        for given in [
            "not ok",
            "ok error",
            "ok then error",
            "no error: ok",
            "ok?/error",
        ] {
            assert!(!predicted(q, given, "ok"), "{given}");
        }
        // A question without options is read as before.
        assert!(!predicted(
            "Which plugin?",
            "bandwidth first then portmap",
            "bandwidth"
        ));
        assert!(predicted(
            "Which plugin?",
            "the bandwidth plugin",
            "bandwidth"
        ));
        assert!(question_options("Which `X`? Run `show wire`.").is_empty());
        assert_eq!(question_options("`a`, `b` or `c`: which?"), ["a", "b", "c"]);
    }

    /// QA 23 §2 and §8: a prediction naming two addresses states no single answer. It is
    /// refused, with no try used (it was marked wrong, or right when the answer came
    /// first), whether the second is a candidate or part of a reason; one address with a
    /// reason still counts.
    #[test]
    fn a_prediction_naming_two_addresses_is_refused() {
        let quiz = Quiz {
            line: 1,
            question: "Predict the IP of the next pod created on node-1.".into(),
            kind: QuizKind::Predict {
                answer: "10.244.1.7".into(),
                run: String::new(),
            },
            explanation: String::new(),
        };
        for given in [
            "10.244.1.7, the one after last_reserved_ip 10.244.1.6",
            "10.244.1.8 and 10.244.1.9",
            "10.244.1.7 10.244.1.8",
        ] {
            let refused = quiz.refuse(given).expect(given);
            assert!(
                refused.contains("names more than one address")
                    && refused.ends_with("this try is not used"),
                "{given}: {refused}"
            );
            assert!(!quiz.is_right(given), "{given}");
        }
        for given in [
            "10.244.1.7 because the lease of c3 is kept",
            "10.244.1.7/24 on eth0",
        ] {
            assert_eq!(quiz.refuse(given), None, "{given}");
            assert!(quiz.is_right(given), "{given}");
        }
    }

    /// QA 23 §4: a negation in the reason after the answer is about the reason (`not per
    /// pod`), so the prediction counts; one before the answer, or opening the reason, still
    /// hedges it, and a second option in the reason is still a second answer.
    #[test]
    fn a_negation_in_a_reason_is_not_a_hedge() {
        let q = "Will s3 be `Running` or `Pending`?";
        for given in [
            "Running, RWO is per node, not per pod",
            "Running: the claim isn't bound to another node",
            "Running. It does not wait for the other pod",
            "Running \u{2014} its volume is not held on another node",
        ] {
            assert_eq!(prediction_flaw(q, given, false), None, "{given}");
            assert!(predicted(q, given, "Running"), "{given}");
        }
        for (given, flaw) in [
            ("not Running, it waits", Flaw::Hedges("not".into())),
            ("Running, probably", Flaw::Hedges("probably".into())),
            ("Running, not Pending", Flaw::Hedges("not".into())),
            (
                "maybe Running, RWO is per node",
                Flaw::Hedges("maybe".into()),
            ),
            ("Running, or Pending", Flaw::Hedges("or".into())),
            ("Running, but s2 is not Pending", Flaw::SeveralOptions),
        ] {
            assert_eq!(prediction_flaw(q, given, false), Some(flaw), "{given}");
            assert!(!predicted(q, given, "Running"), "{given}");
        }
        // An address answer with a reason that negates.
        let q = "Predict the IP of the next pod created on node-1.";
        assert!(predicted(
            q,
            "10.244.1.7: the lease of c3 is not released",
            "10.244.1.7"
        ));
        assert!(!predicted(q, "10.244.1.7, not reused yet", "10.244.1.7"));
        assert!(!predicted(q, "not 10.244.1.7, it is taken", "10.244.1.7"));
    }

    /// QA 25 §3: a second address written short (`.9`, `1.9`) is a second address, and
    /// `else`/`and`/`then`/`/` joining two answers do not make one; a question mark asks
    /// instead of predicting. Each is refused with no try used, as the full-form case is.
    #[test]
    fn a_shortened_second_address_or_a_question_is_no_prediction() {
        let quiz = Quiz {
            line: 1,
            question: "Predict the IP of the next pod created on node-1.".into(),
            kind: QuizKind::Predict {
                answer: "10.244.1.8".into(),
                run: String::new(),
            },
            explanation: String::new(),
        };
        for (given, why) in [
            ("10.244.1.8 else .9", "negates or hedges (\"else\")"),
            ("10.244.1.8 and .9", "names more than one address"),
            ("10.244.1.8 / .9", "names more than one address"),
            ("10.244.1.8/.9", "names more than one address"),
            ("10.244.1.8, .9", "names more than one address"),
            ("10.244.1.8 then .2", "names more than one address"),
            ("10.244.1.8 then 1.9", "names more than one address"),
            ("10.244.1.8 and 9", "names more than one address"),
            ("10.244.1.8, or otherwise .9", "negates or hedges (\"or\")"),
            ("10.244.1.8/9", "names more than one address"),
            ("10.244.1.8,10.244.1.9", "names more than one address"),
            ("10.244.1.8;10.244.1.9", "names more than one address"),
            ("10.244.1.8:.9", "names more than one address"),
            ("10.244.1.8,.9,.10", "names more than one address"),
            ("A", "names no address, and the question asks for one"),
            (
                "the next one after .7",
                "names no address, and the question asks for one",
            ),
            ("10.244.1.8 i guess", "negates or hedges (\"guess\")"),
            (
                "10.244.1.8 unless c1 is reused",
                "negates or hedges (\"unless\")",
            ),
            ("10.244.1.8/10.244.1.9", "names more than one address"),
            ("10.244.1.8/1.9", "names more than one address"),
            ("it gets 10.244.1.8/7.", "names more than one address"),
            ("10.244.1.8?", "asks (\"?\") instead of stating an answer"),
            ("10.244.1.8 ?", "asks (\"?\") instead of stating an answer"),
            // A reason naming another address short names two, as in full form.
            (
                "10.244.1.8: round robin goes on from .7",
                "names more than one address",
            ),
        ] {
            let refused = quiz.refuse(given).expect(given);
            assert!(
                refused.contains(why) && refused.ends_with("this try is not used"),
                "{given}: {refused}"
            );
            assert!(!quiz.is_right(given), "{given}");
        }
        // One address, its tail named again, a prefix length, a reason that says why.
        for given in [
            "10.244.1.8",
            "10.244.1.8/24",
            "10.244.1.8/32.",
            "10.244.1.8/26",
            "10.244.1.8, i.e. .8",
            "10.244.1.8 (onlink via flannel.1)",
            "10.244.1.8, after 2 pods",
            "10.244.1.8, after 1.5 s",
            "10.244.1.8: the resync takes 2.5 seconds",
            "10.244.1.8 (the node has 1.5 GiB left)",
        ] {
            assert_eq!(quiz.refuse(given), None, "{given}");
            assert!(quiz.is_right(given), "{given}");
        }
        let q = "Does the chain answer ok or an error? (Answer `ok` or `error`.)";
        assert_eq!(prediction_flaw(q, "ok?", false), Some(Flaw::Asks));
        assert!(!predicted(q, "ok?", "ok"));
        // A question in the reason is about the reason.
        assert!(predicted(q, "ok, why would it fail?", "ok"));
        assert!(predicted(
            "Will s3 be `Running` or `Pending`?",
            "Running, RWO is per node, not per pod",
            "Running"
        ));
    }

    #[test]
    fn a_cni_command_may_be_named_without_cni() {
        for given in ["DEL", "del", "CNI DEL", "`DEL`", "the DEL", "cni del."] {
            assert!(same_prediction(given, "CNI DEL"), "{given}");
        }
        // Only the command itself: not another command, not `CNI` alone, and not a word
        // that is no CNI command.
        for (given, answer) in [
            ("ADD", "CNI DEL"),
            ("CNI", "CNI DEL"),
            ("DEL NodeUnpublishVolume", "CNI DEL"),
            ("DELETE", "CNI DEL"),
            ("bandwidth", "CNI bandwidth"),
            ("NodeUnpublishVolume", "CNI DEL"),
        ] {
            assert!(!same_prediction(given, answer), "{given} for {answer}");
        }
    }
}

#[cfg(test)]
mod option_tests {
    use super::*;

    /// Helpers' play, stop 66: options joined without spaces are as many options as with
    /// them; an answer that names no option is refused without using the one try; a whole
    /// order of every option answers "which comes first" by its first.
    #[test]
    fn joined_absent_and_ordered_options() {
        let q = "Does the chain answer ok or an error? (Answer `ok` or `error`.)";
        for given in ["ok,error", "ok;error", "ok:error", "error,ok"] {
            assert_eq!(
                prediction_flaw(q, given, false),
                Some(Flaw::SeveralOptions),
                "{given}"
            );
            assert!(!predicted(q, given, "ok"), "{given}");
        }
        for given in ["ok/fail", "ok, alternatively it fails"] {
            assert!(prediction_flaw(q, given, false).is_some(), "{given}");
        }
        for given in ["could be ok", "ok (depends)"] {
            assert!(
                matches!(prediction_flaw(q, given, false), Some(Flaw::Hedges(_))),
                "{given}"
            );
        }
        for given in ["okay", "exit 0", "ok", "success"] {
            assert_eq!(prediction_flaw(q, given, false), None, "{given}");
            assert!(predicted(q, given, "ok"), "{given}");
        }
        let q = "May db reach web on port 80? Answer `allowed` or `denied`.";
        for given in ["deny", "dropped", "blocked", "A"] {
            assert_eq!(
                prediction_flaw(q, given, false),
                Some(Flaw::NoOption),
                "{given}"
            );
        }
        let q = "Which plugin runs DEL first: `bridge`, `portmap` or `bandwidth`?";
        for given in ["bandwidth,bridge", "bandwidth, bridge", "bandwidth bridge"] {
            assert_eq!(
                prediction_flaw(q, given, false),
                Some(Flaw::SeveralOptions),
                "{given}"
            );
        }
        for (given, right) in [
            ("bandwidth, portmap, bridge", true),
            ("bandwidth, portmap then bridge", true),
            ("bridge, portmap, bandwidth", false),
        ] {
            assert_eq!(prediction_flaw(q, given, false), None, "{given}");
            assert_eq!(predicted(q, given, "bandwidth"), right, "{given}");
        }
        // The same option twice is no whole order.
        assert_eq!(
            prediction_flaw(q, "bandwidth, portmap, bandwidth", false),
            Some(Flaw::SeveralOptions)
        );
        // A next hop is an address, not the destination network the question names.
        let q = "Which next hop (an IP address) does node-2 use for node-3's pods (10.244.3.0/24)?";
        assert_eq!(
            prediction_flaw(q, "10.244.3.0/24", true),
            Some(Flaw::Network)
        );
        assert_eq!(prediction_flaw(q, "via 10.244.3.0", true), None);
        // IPv6 colons do not part an address.
        let q = "Which address does it get?";
        assert_eq!(prediction_flaw(q, "fd00:10:244:1::7", true), None);
        assert!(predicted(q, "fd00:10:244:1::7", "fd00:10:244:1::7"));
    }
}

#[cfg(test)]
mod choice_tests {
    use super::*;

    /// Helpers' play, stop 66: typing an option's own text was refused as "not one of
    /// this quiz's options"; it names that option.
    #[test]
    fn an_option_s_text_names_the_option() {
        let options = vec![
            (
                'A',
                "The address after `last_reserved_ip`, wrapping at the end of the range."
                    .to_string(),
            ),
            ('B', "The lowest free address.".to_string()),
        ];
        assert_eq!(chosen("b", &options), Some('B'));
        assert_eq!(
            chosen(
                "the address after last_reserved_ip,  wrapping at the end of the range",
                &options
            ),
            Some('A')
        );
        assert_eq!(chosen("The lowest free address", &options), Some('B'));
        assert_eq!(chosen("the lowest", &options), None);
        assert_eq!(chosen("C", &options), None);
        assert_eq!(chosen("", &options), None);
    }
}
