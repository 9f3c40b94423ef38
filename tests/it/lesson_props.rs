//! No panic on any input: the lesson parser on arbitrary text, the check language on
//! arbitrary lines, and the player on arbitrary sequences of learner commands.

use lab_engine::lesson::{check, parse};
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "```lesson\n",
    "format_version: 1\n",
    "format_version: 99\n",
    "id: x\n",
    "title: T\n",
    "chapter: 7\n",
    "```\n",
    "~~~\n",
    "```lab\n",
    "```check\n",
    "```hint\n",
    "```quiz\n",
    "```predict\n",
    "## Step 1 · S\n",
    "## Step 2 · S\n",
    "## Step x\n",
    "## Quiz\n",
    "Section: 7.4\n",
    "**Task:** do it\n",
    "pod create web --node node-1\n",
    "! pod create web --node node-1\n",
    "pod web phase Running\n",
    "not pod web exists\n",
    "question: Q?\n",
    "A) a\n",
    "B) b\n",
    "answer: B\n",
    "run: pod create p --node node-1\n",
    "explanation: e\n",
    "\"unbalanced\n",
    "\n",
    "é ✓ 中文\n",
];

const LINES: &[&str] = &[
    "lesson start ch7-hands-on",
    "lesson status",
    "lesson list",
    "lesson retry",
    "lesson reset",
    "lesson stop",
    "lesson answer B",
    "lesson answer 10.244.1.6",
    "hint",
    "skip",
    "back",
    "reset",
    "pod create web --node node-1 --label app=web",
    "pod delete web",
    "show wire 0",
    "cni add c1 --node node-1",
    "nonsense words",
    "\"unbalanced",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_parser_never_panics(pieces in prop::collection::vec(0..PIECES.len(), 0..40)) {
        let text: String = pieces.iter().map(|i| PIECES[*i]).collect();
        let _ = parse::parse("p.md", &text);
    }

    #[test]
    fn the_parser_never_panics_on_any_text(text in "\\PC{0,200}") {
        let _ = parse::parse("p.md", &text);
        let _ = check::parse(1, &text);
    }

    #[test]
    fn the_player_never_panics_and_stays_in_range(ops in prop::collection::vec(0..LINES.len(), 1..14)) {
        let mut desk = crate::common::desk();
        for i in ops {
            let _ = desk.execute(LINES[i]);
            if let Some(s) = &desk.lessons.session {
                prop_assert!(s.at <= s.lesson.item_count());
                prop_assert!(s.progress.done() <= s.lesson.item_count());
            }
        }
    }
}
