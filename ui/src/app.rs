//! The dashboard's state and its one update function: `App { desk, ui }`, where `ui` holds
//! view-only state (mode, focus, selections, scroll, prompt, history, output) and
//! [`App::update`] applies an [`Action`]. Two things change the lab, both through
//! `Desk::execute`: [`Action::Run`] (everything a hotkey does is a command line a learner
//! could type) and, on each tick, the calls `csi serve` received on its socket.
//!
//! Selections follow commands, not the other way round: `show ipam node-2` (typed, or the
//! `n` hotkey) selects node-2; `describe pod web` (or `d`) selects web; `pod create …`
//! selects the new pod; and after a command whose plugin calls all ran on one node, that
//! node is selected so its IPAM change is on screen.

use super::keymap::{Action, Edit, Mode, Pane};
use super::theme::Theme;
use super::view;
use lab_engine::dash::{self as model, LessonView, PodIndex, PodKey};
use lab_engine::engine::node_view::{self, IpamFiles, LeaseRow};
use lab_engine::lesson::Desk;
use lab_engine::record::WireRecord;
use lab_engine::render::{Line, Role};
use ratatui::layout::Rect;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;

/// Lines of output kept for scrollback.
pub const OUTPUT_KEEP: usize = 10_000;
/// Commands kept in the history.
pub const HISTORY_KEEP: usize = 1_000;
/// Ticks (about 250 ms each) a flash message stays.
pub const FLASH_TICKS: u32 = 100;

/// A line being edited (command line or filter), with a cursor at a char boundary.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Prompt {
    /// The text.
    pub text: String,
    /// Byte offset of the cursor.
    pub cursor: usize,
    /// A character would have made the line longer than the longest command
    /// (`MAX_LINE`): the line is refused, and every character typed after it dropped,
    /// until it is entered or cleared.
    pub refused: bool,
}

impl Prompt {
    /// Replace the text and put the cursor at the end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.refused = false;
    }

    /// Insert text at the cursor (a paste), in one step; `false` (and nothing inserted)
    /// when the line would be longer than the longest command.
    pub fn insert_str(&mut self, text: &str) -> bool {
        if self.refused || self.text.len() + text.len() > lab_engine::command::MAX_LINE {
            return false;
        }
        self.text.insert_str(self.cursor, text);
        self.cursor += text.len();
        true
    }

    /// Apply an editing operation.
    pub fn edit(&mut self, e: Edit) {
        let before = |p: &Prompt| p.text[..p.cursor].chars().next_back().map(char::len_utf8);
        let after = |p: &Prompt| p.text[p.cursor..].chars().next().map(char::len_utf8);
        match e {
            Edit::Insert(c) => {
                if self.refused || self.text.len() + c.len_utf8() > lab_engine::command::MAX_LINE {
                    self.refused = true;
                    return;
                }
                self.text.insert(self.cursor, c);
                self.cursor += c.len_utf8();
            }
            Edit::Backspace => {
                if let Some(n) = before(self) {
                    self.cursor -= n;
                    self.text.remove(self.cursor);
                }
            }
            Edit::Delete => {
                if after(self).is_some() {
                    self.text.remove(self.cursor);
                }
            }
            Edit::Left => self.cursor -= before(self).unwrap_or(0),
            Edit::Right => self.cursor += after(self).unwrap_or(0),
            Edit::Home => self.cursor = 0,
            Edit::End => self.cursor = self.text.len(),
            Edit::Clear => self.set(""),
            Edit::DeleteWord => {
                let head = &self.text[..self.cursor];
                let trimmed = head.trim_end();
                let start = trimmed.rfind(char::is_whitespace).map_or(0, |i| i + 1);
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
        }
    }
}

/// How a flash message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashLevel {
    /// A command ran.
    Info,
    /// A hotkey could not run (nothing selected).
    Warn,
    /// A command failed.
    Err,
}

/// A short message about the last thing that happened (k9s' flash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// The text.
    pub text: String,
    /// Its level.
    pub level: FlashLevel,
    /// Ticks since it appeared.
    pub age: u32,
}

/// View-only state.
#[derive(Debug, Clone)]
pub struct UiState {
    /// What keys act on.
    pub mode: Mode,
    /// The mode to return to when the help overlay closes.
    pub prev_mode: Mode,
    /// The focused pane.
    pub focus: Pane,
    /// Panes to return to with Esc after an automatic focus change.
    pub focus_stack: Vec<Pane>,
    /// The pane the narrow grid shows under Topology: the last of IPAM, Routes and
    /// Volumes that had the focus.
    pub grid_partner: Pane,
    /// The terminal's area at the last resize or draw.
    pub area: Rect,
    /// The command line.
    pub prompt: Prompt,
    /// The filter (applies while non-empty).
    pub filter: Prompt,
    /// Commands run, oldest first.
    pub history: Vec<String>,
    history_pos: Option<usize>,
    draft: String,
    /// The usage hint for what is typed.
    pub hint: Option<String>,
    /// Candidates from the last Tab, when there were several.
    pub candidates: Vec<String>,
    /// The flash message.
    pub flash: Option<Flash>,
    /// Output scrollback (the echo of each command, then what it printed).
    pub output: VecDeque<Line>,
    /// Lines ever pushed to the output (to find a command's echo after old lines dropped).
    pub output_pushed: u64,
    /// Per pane: the first row shown (Output: lines up from the bottom).
    pub scroll: [usize; Pane::ALL.len()],
    /// The selected node (IPAM and Routes show it).
    pub sel_node: Option<String>,
    /// The selected pod.
    pub sel_pod: Option<PodKey>,
    /// The selected call; `None` follows the newest.
    pub sel_call: Option<u64>,
    /// Whether the lesson hint is shown.
    pub show_hint: bool,
    /// How far the help overlay is scrolled.
    pub help_scroll: usize,
    /// The call the wire pane follows while no call is selected: chosen after each command
    /// that ran plugins (its first failure, else its newest CNI chain); kept otherwise.
    pub wire_follow: Option<u64>,
    /// The call the lesson step's wire check names (its newest record), kept in view in
    /// Calls while no call is selected.
    pub focus_call: Option<u64>,
    /// The lesson step whose focus was applied last: (lesson title, step number).
    pub focused_step: Option<(String, u32)>,
    /// The command line was opened with `:` (k9s's prompt): one kind's name on it lists
    /// the kind.
    pub colon: bool,
    /// k9s's resource view: the `:KIND` listing in the output, its selected row.
    pub jump: Option<Jump>,
    /// Set when the dashboard should exit.
    pub quit: bool,
}

/// A `:KIND` listing (k9s's resource jump) in the output pane: the kind's `get -o wide`
/// rows, one selected; Enter describes it, Esc goes back.
#[derive(Debug, Clone)]
pub struct Jump {
    /// The word typed after `:` (`po`, `pvc`), to list the kind again.
    pub word: String,
    /// The namespace listed (`:pods kube-system`; `default` when none was typed), or
    /// `None` for every namespace (`:pods all`).
    pub namespace: Option<String>,
    /// The objects the rows show, in order.
    pub objects: Vec<lab_engine::cluster::ObjectRef>,
    /// The output line (counted as [`UiState::output_pushed`] counts) of the first row.
    pub first_row: u64,
    /// The selected row.
    pub selected: usize,
    /// Enter ran `describe` on the selected row: Esc lists the kind again.
    pub describing: bool,
}

impl Default for UiState {
    fn default() -> Self {
        UiState {
            mode: Mode::Command,
            prev_mode: Mode::Command,
            focus: Pane::Topology,
            focus_stack: Vec::new(),
            grid_partner: Pane::Ipam,
            area: Rect::new(0, 0, 160, 48),
            prompt: Prompt::default(),
            filter: Prompt::default(),
            history: Vec::new(),
            history_pos: None,
            draft: String::new(),
            hint: None,
            candidates: Vec::new(),
            flash: None,
            output: VecDeque::new(),
            output_pushed: 0,
            scroll: [0; Pane::ALL.len()],
            sel_node: None,
            sel_pod: None,
            sel_call: None,
            show_hint: false,
            help_scroll: 0,
            wire_follow: None,
            focus_call: None,
            focused_step: None,
            colon: false,
            jump: None,
            quit: false,
        }
    }
}

/// What the last command changed in the selected node's host-local store.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpamChanges {
    /// The node the changes are about.
    pub node: String,
    /// Lease files written: (network, IP).
    pub added: BTreeSet<(String, IpAddr)>,
    /// Lease files removed: (network, the file's IP and what it held).
    pub removed: Vec<(String, LeaseRow)>,
    /// `last_reserved_ip.N` files that changed: (network, N).
    pub cursors: BTreeSet<(String, usize)>,
}

/// State derived from the lab and the UI, refreshed after each command or filter change
/// (never per frame).
#[derive(Debug, Clone, Default)]
pub struct Derived {
    /// Pods by node.
    pub pods: PodIndex,
    /// Pods by node under the filter (`None` without a filter).
    pub filtered: Option<BTreeMap<String, Vec<PodKey>>>,
    /// Call-log sequence numbers matching the filter (`None` without a filter).
    pub calls: Option<Vec<u64>>,
    /// What the last command changed in the IPAM store on screen.
    pub ipam: IpamChanges,
    /// The selected node's route tables (`ip route`, `ip -6 route`), and which node it is for. A node
    /// table is O(nodes²) to build, so it is built once per command or selection change.
    pub routes: NodeRoutes,
    /// Where each node's box starts in the topology (of the groups shown).
    pub topo: TopoRows,
}

/// The topology's rows, per node in the order the pane draws them: where each node's box
/// starts and how many pods come before it, so a frame finds the boxes in view with a
/// binary search instead of walking every node (5,000 on `--preset k8s-limits`). Rebuilt
/// with the groups (after each command and filter change); debug builds check it against
/// the walk over the groups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopoRows {
    /// The groups' node names, in order.
    names: Vec<String>,
    /// Per node: the rows of the boxes before it, not counting the blank line after each
    /// box that an airy theme adds; one entry more, the total.
    rows_before: Vec<usize>,
    /// Per node: the pods before it; one entry more, the total.
    pods_before: Vec<usize>,
    /// How many of the groups are nodes (the group of pods not scheduled yet is not).
    nodes: usize,
}

impl TopoRows {
    /// The rows of the groups, reusing `names` when the nodes are the same.
    fn rebuild(&mut self, groups: &BTreeMap<String, Vec<PodKey>>, ix: &PodIndex) {
        if !self
            .names
            .iter()
            .map(String::as_str)
            .eq(groups.keys().map(String::as_str))
        {
            self.names = groups.keys().cloned().collect();
        }
        self.rows_before.clear();
        self.pods_before.clear();
        let (mut rows, mut pods) = (0, 0);
        for (node, list) in groups {
            self.rows_before.push(rows);
            self.pods_before.push(pods);
            rows += 3 + pod_rows(ix, node, list).max(1);
            pods += list.len();
        }
        self.rows_before.push(rows);
        self.pods_before.push(pods);
        self.nodes = self.names.len() - usize::from(groups.contains_key(""));
    }

    /// How many nodes the groups hold.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// How many pods the groups hold.
    pub fn pods(&self) -> usize {
        self.pods_before.last().copied().unwrap_or(0)
    }

    /// The row the box of the `i`th group starts on (`i` = the number of groups: the
    /// total).
    fn start(&self, i: usize, airy: bool) -> usize {
        self.rows_before.get(i).copied().unwrap_or(0) + if airy { i } else { 0 }
    }

    /// The first group whose box reaches below `row`, and the row its box starts on.
    pub fn group_at_row(&self, row: usize, airy: bool) -> Option<(&str, usize)> {
        let n = self.names.len();
        // A binary search over the boxes' ends (they grow with the index).
        let (mut i, mut hi) = (0, n);
        while i < hi {
            let mid = i + (hi - i) / 2;
            if self.start(mid + 1, airy) <= row {
                i = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.names
            .get(i)
            .map(|name| (name.as_str(), self.start(i, airy)))
    }
}

/// The rows the pods of one node take (a walk only for a node with multi-interface pods).
fn pod_rows(ix: &PodIndex, node: &str, pods: &[PodKey]) -> usize {
    if !ix.node_has_extra(node) {
        return pods.len();
    }
    pods.iter().map(|k| 1 + ix.extra_rows(k)).sum()
}

/// A node's route table as computed for the routes pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeRoutes {
    /// The node.
    pub node: Option<String>,
    /// The rows under the pane's `$ ip route` prompt: the IPv4 routes, then (when the node
    /// has IPv6 routes) the `$ ip -6 route` prompt and its routes.
    pub rows: Vec<RouteRow>,
    /// The widest row's width in columns (so a frame knows every row fits a pane without
    /// measuring 5,000 of them).
    pub widest: usize,
    /// Why there is no table (an unknown node).
    pub error: Option<String>,
}

/// A row of a route table in the routes pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteRow {
    /// A route, as `ip route` prints it.
    Route(lab_engine::dash::RouteFact),
    /// The prompt of the table's second command (`ip -6 route`).
    Prompt(&'static str),
    /// A note in place of routes (the group of pods not scheduled yet has no kernel).
    Note(&'static str),
}

impl RouteRow {
    /// The rows of a namespace's tables under its first prompt (`ip route`).
    pub fn of(tables: lab_engine::dash::RouteTables) -> Vec<RouteRow> {
        let mut rows: Vec<RouteRow> = tables.v4.into_iter().map(RouteRow::Route).collect();
        if !tables.v6.is_empty() {
            rows.push(RouteRow::Prompt("ip -6 route"));
            rows.extend(tables.v6.into_iter().map(RouteRow::Route));
        }
        rows
    }
}

/// The dashboard: the lab, the view state and the theme.
pub struct App {
    /// The lab and its lessons (mutated only through `Desk::execute`).
    pub desk: Desk,
    /// View-only state.
    pub ui: UiState,
    /// Styles.
    pub theme: Theme,
    /// The lesson pane's content while a lesson runs.
    pub lesson: Option<LessonView>,
    /// `lesson play` in progress: the events still to show, paced by ticks.
    pub playback: Option<Playback>,
    /// Derived state.
    pub derived: Derived,
    /// The front end's own commands (`csi serve` natively: the calls that arrive on its
    /// socket run on every tick; dropping the dashboard stops it) and file names.
    pub host: Box<dyn crate::host::Host>,
}

type IpamSnapshot = (String, BTreeMap<String, IpamFiles>);

/// What the Output pane shows for a lesson step's text while the Lesson pane shows it.
const LESSON_TEXT_BESIDE: &str = "  (the step's text is in the Lesson pane)";

/// How far back in the call log a step's wire call is looked for.
const FOCUS_CALL_LOOKBACK: usize = 4096;

/// How often playback advances (the event loop's tick).
const PLAYBACK_TICK_MS: u64 = 100;

/// How a command line run in the dashboard ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    /// It ran (or asked for help, or was the dashboard's own word).
    Done,
    /// It failed: an error is in the output.
    Failed,
}

/// `lesson play` in the dashboard: what is left to show and how long to wait.
#[derive(Debug, Clone)]
pub struct Playback {
    /// Events still to show.
    pub events: std::collections::VecDeque<lab_engine::lesson::play::PlayEvent>,
    /// Characters of the current command typed so far.
    pub typed: usize,
    /// Ticks to wait before the next event.
    pub wait_ticks: u64,
    /// `--step`: waiting for Enter.
    pub waiting_key: bool,
    /// The commands are a lesson's code (run as `lesson::guard` says), not a script of
    /// the learner's or the teacher's (`play FILE`).
    pub lesson_code: bool,
    /// What the lesson pane shows meanwhile: the step's heading and text (a script's last
    /// caption), so the output of its commands does not scroll them away.
    pub view: LessonView,
    /// How many of the headings are steps (the quizzes' follow them): the pane counts
    /// `step 3/22`, then `quiz 1/6`, as the headings do.
    pub steps: usize,
}

impl Playback {
    fn new(
        events: Vec<lab_engine::lesson::play::PlayEvent>,
        title: String,
        lesson_code: bool,
        steps: usize,
    ) -> Self {
        use lab_engine::lesson::play::PlayEvent;
        let total = events
            .iter()
            .filter(|e| matches!(e, PlayEvent::Heading(_)))
            .count();
        Playback {
            events: events.into(),
            typed: 0,
            wait_ticks: 0,
            waiting_key: false,
            lesson_code,
            view: LessonView {
                title,
                total,
                position: "playing · Esc stops".to_string(),
                ..LessonView::default()
            },
            steps,
        }
    }

    /// Where the playback is: `step 3/22` or `quiz 1/6` (none before the first heading or
    /// for a script's captions).
    fn at(&self) -> Option<String> {
        let (done, total) = (self.view.done.min(self.view.total), self.view.total);
        match done {
            0 => None,
            d if d <= self.steps => Some(format!("step {d}/{}", self.steps)),
            d => Some(format!("quiz {}/{}", d - self.steps, total - self.steps)),
        }
    }

    /// An item's heading: a new step or quiz (its text follows).
    fn heading(&mut self, h: &str) {
        self.view.done += 1;
        self.view.goal.clear();
        self.title(h);
    }

    /// The step's task: shown as the pane's goal, above the text, so it stays in view.
    fn task(&mut self, t: &str) {
        self.view.goal = t.split_whitespace().collect::<Vec<_>>().join(" ");
    }

    /// The lesson's title, shown until the first step's heading.
    fn title(&mut self, h: &str) {
        self.view.text = h.to_string();
    }

    /// Teaching text, a task or a caption, under the heading.
    fn text(&mut self, t: &str) {
        if self.view.text.is_empty() || self.lesson_code {
            if !self.view.text.is_empty() {
                self.view.text.push('\n');
            }
        } else {
            // A script's caption replaces the one before.
            self.view.text.clear();
        }
        self.view.text.push_str(&paragraphs(t));
    }

    /// The cue in the lesson pane and at the prompt.
    pub fn cue(&self) -> &'static str {
        if self.waiting_key {
            "Enter: next · Esc: stop"
        } else {
            "playing · Esc stops"
        }
    }
}

/// Source lines joined into paragraphs (blank lines separate them), as the lesson pane
/// wraps them to its width.
fn paragraphs(t: &str) -> String {
    t.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

impl App {
    /// A dashboard on a lab (a bare `Lab` gets the embedded lessons beside it).
    pub fn new(desk: impl Into<Desk>, theme: Theme) -> Self {
        let desk = desk.into();
        let mut app = App {
            derived: Derived {
                pods: PodIndex::new(&desk.lab),
                ..Derived::default()
            },
            desk,
            ui: UiState::default(),
            theme,
            lesson: None,
            playback: None,
            host: Box::new(crate::host::NoHost),
        };
        app.ui.hint = None;
        app.refresh_topo();
        app.fix_selection();
        app.derived.ipam.node = app.ui.sel_node.clone().unwrap_or_default();
        app.refresh_routes();
        app
    }

    /// This dashboard with the front end's own commands and file names (the default,
    /// [`crate::host::NoHost`], has neither).
    pub fn with_host(mut self, host: Box<dyn crate::host::Host>) -> Self {
        self.host = host;
        self
    }

    /// Show what the lesson's current step is about ([`model::Focus`]): on a new step, bring
    /// its pane forward and select its node or pod; on every command, show the newest
    /// record of the wire call its checks name (in Wire, and in view in Calls).
    fn follow_step_focus(&mut self) {
        let Some(view) = &self.lesson else {
            self.ui.focus_call = None;
            return;
        };
        let Some(focus) = view.focus.clone() else {
            self.ui.focus_call = None;
            return;
        };
        let step = view.step.map(|n| (view.title.clone(), n));
        self.ui.focus_call = focus
            .wire
            .as_ref()
            .and_then(|w| model::latest_call_of(&self.desk.lab, w, FOCUS_CALL_LOOKBACK));
        if let Some(c) = self.ui.focus_call {
            self.ui.wire_follow = Some(c);
        }
        if step.is_none() || self.ui.focused_step == step {
            return;
        }
        self.ui.focused_step = step;
        let pod = focus.pod.as_deref().and_then(|p| {
            let (ns, name) = p.split_once('/').unwrap_or(("default", p));
            let key = (ns.to_string(), name.to_string());
            self.desk.lab.pod_node(&key).map(|n| (key, n.to_string()))
        });
        if let Some((key, node)) = pod {
            self.ui.sel_node = Some(node);
            self.ui.sel_pod = Some(key);
        }
        if let Some(n) = focus
            .node
            .filter(|n| self.derived.pods.by_node.contains_key(n))
        {
            if self.ui.sel_node.as_ref() != Some(&n) {
                self.ui.sel_pod = None;
            }
            self.ui.sel_node = Some(n);
        }
        self.fix_selection();
        self.refresh_routes();
        if let Some(p) = focus.pane {
            self.ui.focus = match p {
                model::FocusPane::Wire => Pane::Wire,
                model::FocusPane::Volumes => Pane::Volumes,
                model::FocusPane::Ipam => Pane::Ipam,
                model::FocusPane::Calls => Pane::Calls,
                model::FocusPane::Routes => Pane::Routes,
                model::FocusPane::Topology => Pane::Topology,
            };
            self.ui.focus_stack.clear();
            if matches!(self.ui.focus, Pane::Ipam | Pane::Routes | Pane::Volumes) {
                self.ui.grid_partner = self.ui.focus;
            }
        }
    }

    /// Whether the loop should stop.
    pub fn should_quit(&self) -> bool {
        self.ui.quit
    }

    /// Show (or clear) the lesson pane.
    pub fn set_lesson(&mut self, lesson: Option<LessonView>) {
        self.lesson = lesson;
        if self.lesson.is_none() && self.ui.focus == Pane::Lesson {
            self.ui.focus = Pane::Topology;
        }
    }

    /// The panes on screen, in focus order (the lesson pane only while a lesson runs).
    pub fn panes(&self) -> Vec<Pane> {
        Pane::ALL
            .iter()
            .copied()
            .filter(|p| *p != Pane::Lesson || self.lesson.is_some())
            .collect()
    }

    /// Pods by node as the topology shows them (filtered when a filter is set).
    pub fn groups(&self) -> &BTreeMap<String, Vec<PodKey>> {
        self.derived
            .filtered
            .as_ref()
            .unwrap_or(&self.derived.pods.by_node)
    }

    /// Apply one action; the returned action (if any) is applied next (TEA chaining).
    pub fn update(&mut self, action: Action) -> Option<Action> {
        let next = self.apply(action);
        if matches!(self.ui.focus, Pane::Ipam | Pane::Routes | Pane::Volumes) {
            self.ui.grid_partner = self.ui.focus;
        }
        if self.derived.routes.node != self.ui.sel_node {
            self.refresh_routes();
        }
        next
    }

    fn refresh_routes(&mut self) {
        let node = self.ui.sel_node.clone();
        let table = match node.as_deref() {
            // The group of pods not scheduled yet has no kernel.
            Some("") => Ok(vec![RouteRow::Note(
                "(not scheduled yet: no node, so no routes)",
            )]),
            Some(n) => self.desk.lab.node_routes(n).map(RouteRow::of),
            None => Ok(Vec::new()),
        };
        self.derived.routes = match table {
            Ok(rows) => NodeRoutes {
                node,
                widest: rows
                    .iter()
                    .map(|r| match r {
                        RouteRow::Route(f) => {
                            unicode_width::UnicodeWidthStr::width(f.line.as_str())
                        }
                        RouteRow::Note(n) => unicode_width::UnicodeWidthStr::width(*n),
                        RouteRow::Prompt(_) => 0,
                    })
                    .max()
                    .unwrap_or(0),
                rows,
                error: None,
            },
            Err(e) => NodeRoutes {
                node,
                rows: Vec::new(),
                widest: 0,
                error: Some(e),
            },
        };
    }

    fn apply(&mut self, action: Action) -> Option<Action> {
        if self.ui.mode == Mode::Help {
            match action {
                Action::Select(d) | Action::Page(d) => {
                    let step = if matches!(action, Action::Page(_)) {
                        10
                    } else {
                        1
                    };
                    self.ui.help_scroll =
                        (self.ui.help_scroll as i64 + i64::from(d) * step).clamp(0, 200) as usize;
                    return None;
                }
                Action::ToggleHelp | Action::Back => self.ui.help_scroll = 0,
                _ => {}
            }
        }
        match action {
            Action::Run(line) => {
                self.run_command(&line);
                None
            }
            // On an empty command line, the arrows and Esc step the trace being stepped.
            Action::Edit(Edit::Left) if self.stepping_keys() => Some(Action::StepHop(-1)),
            Action::Edit(Edit::Right) if self.stepping_keys() => Some(Action::StepHop(1)),
            // Enter on an empty command line is the next step, as a playback's Enter is its
            // next command and the REPL's empty line is `step`.
            Action::Submit if self.ui.mode == Mode::Command && self.stepping_keys() => {
                Some(Action::StepHop(1))
            }
            Action::StepHop(d) => {
                if self.desk.stepping().is_none() {
                    self.flash(
                        "nothing is being stepped: `trace SRC DST --step` or `pod create NAME --pvc CLAIM --step`".to_string(),
                        FlashLevel::Warn,
                    );
                    return None;
                }
                Some(Action::Run(
                    if d < 0 { "step back" } else { "step" }.to_string(),
                ))
            }
            Action::RunTemplate(t) => match self.fill(t) {
                Ok(line) => Some(Action::Run(line)),
                Err(msg) => {
                    self.flash(msg, FlashLevel::Warn);
                    None
                }
            },
            Action::OpenPrompt => {
                self.ui.mode = Mode::Command;
                // k9s's prompt: `:pods` lists a kind.
                self.ui.colon = self.ui.prompt.text.is_empty();
                self.update_hint();
                None
            }
            Action::OpenFilter => {
                self.ui.mode = Mode::Filter;
                self.ui.filter.cursor = self.ui.filter.text.len();
                None
            }
            Action::Submit if self.playback.as_ref().is_some_and(|p| p.waiting_key) => {
                if let Some(p) = &mut self.playback {
                    p.waiting_key = false;
                }
                self.show_playback();
                None
            }
            Action::Submit => match self.ui.mode {
                Mode::Command if self.ui.prompt.refused => {
                    self.ui.prompt.set("");
                    self.ui.hint = None;
                    self.flash(lab_engine::command::typed_line_too_long(), FlashLevel::Err);
                    None
                }
                Mode::Command => {
                    let mut line = std::mem::take(&mut self.ui.prompt.text);
                    if std::mem::take(&mut self.ui.colon)
                        && kind_listing(&self.desk.lab, line.trim()).is_some()
                    {
                        line.insert(0, ':');
                    }
                    self.ui.prompt.cursor = 0;
                    self.ui.history_pos = None;
                    self.ui.candidates.clear();
                    self.ui.hint = None;
                    Some(Action::Run(line))
                }
                Mode::Filter => {
                    self.ui.mode = Mode::Normal;
                    None
                }
                _ => None,
            },
            Action::Complete => {
                self.complete();
                None
            }
            Action::History(d) => {
                self.history(d);
                None
            }
            Action::Edit(e) => {
                self.edit(e);
                None
            }
            Action::Paste(text) => {
                if self.ui.mode == Mode::Normal {
                    self.ui.mode = Mode::Command;
                }
                let first = text.lines().next().unwrap_or("");
                self.paste(first);
                None
            }
            Action::Select(d) if self.listing_active() => {
                self.select_row(d as i64);
                None
            }
            Action::Select(d) => {
                self.select(self.ui.focus, d as i64);
                None
            }
            Action::Open => self.open(),
            Action::Page(d) => {
                let h = self.viewport(self.ui.focus).height.max(1) as i64;
                match self.ui.focus {
                    Pane::Output => self.scroll_output(-(d as i64) * h),
                    p => self.select(p, d as i64 * h),
                }
                None
            }
            Action::PageOutput(d) => {
                let h = self.viewport(Pane::Output).height.max(1) as i64;
                self.scroll_output(-(d as i64) * h);
                None
            }
            Action::Home => {
                self.select(self.ui.focus, i64::MIN / 2);
                None
            }
            Action::End => {
                match self.ui.focus {
                    Pane::Calls => self.ui.sel_call = None,
                    Pane::Output => self.ui.scroll[Pane::Output.index()] = 0,
                    p => self.select(p, i64::MAX / 2),
                }
                None
            }
            Action::FocusNext | Action::FocusPrev => {
                let panes = self.panes();
                let at = panes.iter().position(|p| *p == self.ui.focus).unwrap_or(0);
                let n = panes.len();
                let next = if action == Action::FocusNext {
                    (at + 1) % n
                } else {
                    (at + n - 1) % n
                };
                self.ui.focus = panes[next];
                self.ui.focus_stack.clear();
                None
            }
            Action::FocusNth(i) => {
                if let Some(p) = self.panes().get(i) {
                    self.ui.focus = *p;
                    self.ui.focus_stack.clear();
                }
                None
            }
            Action::ScrollAt(x, y, d) => {
                if let Some(p) = self.pane_at(x, y) {
                    match p {
                        Pane::Output => self.scroll_output(-(d as i64)),
                        p => self.select(p, d as i64),
                    }
                }
                None
            }
            Action::ClickAt(x, y) => {
                if let Some(p) = self.pane_at(x, y) {
                    self.ui.focus = p;
                }
                None
            }
            Action::ToggleHelp => {
                if self.ui.mode == Mode::Help {
                    self.ui.mode = self.ui.prev_mode;
                } else {
                    self.ui.prev_mode = self.ui.mode;
                    self.ui.mode = Mode::Help;
                }
                None
            }
            Action::ToggleHint => {
                self.ui.show_hint = !self.ui.show_hint;
                if self.lesson.is_none() {
                    self.flash("no lesson is running".to_string(), FlashLevel::Warn);
                }
                None
            }
            Action::Back => {
                self.back();
                None
            }
            Action::Resize(w, h) => {
                self.ui.area = Rect::new(0, 0, w, h);
                None
            }
            Action::Tick => {
                self.playback_tick();
                self.serve_tick();
                if let Some(f) = &mut self.ui.flash {
                    f.age += 1;
                    if f.age >= FLASH_TICKS {
                        self.ui.flash = None;
                    }
                }
                None
            }
            Action::Quit => {
                self.ui.quit = true;
                None
            }
            Action::EndOfInput => {
                if self.ui.mode == Mode::Command && !self.ui.prompt.text.is_empty() {
                    self.edit(Edit::Delete);
                } else {
                    self.ui.quit = true;
                }
                None
            }
            Action::OfferQuit => {
                self.ui.mode = Mode::Command;
                self.ui.prompt.set("quit");
                self.ui.candidates.clear();
                self.ui.hint = Some("Enter quits · Esc stays".to_string());
                None
            }
            Action::TypeAhead(c) => {
                self.ui.mode = Mode::Command;
                self.ui.colon = false;
                self.edit(Edit::End);
                self.edit(Edit::Insert(c));
                None
            }
        }
    }

    /// Whether ←/→ and Esc move through a stepped trace: one is stepped and no line is
    /// being edited.
    fn stepping_keys(&self) -> bool {
        self.desk.stepping().is_some()
            && match self.ui.mode {
                Mode::Normal => true,
                Mode::Command => self.ui.prompt.text.is_empty(),
                Mode::Filter | Mode::Help => false,
            }
    }

    fn back(&mut self) {
        if self.stepping_keys() {
            self.run_command("step end");
            return;
        }
        if self.playback.is_some() && self.ui.mode != Mode::Help {
            self.playback = None;
            self.ui.prompt.set("");
            self.ui.hint = None;
            self.push_output(Line::styled("── playback stopped", Role::Dim));
            self.show_playback();
            return;
        }
        // Esc ends a `get -w` as Ctrl-C ends kubectl's (not while help is open or a line
        // is being typed).
        let typing = self.ui.mode == Mode::Command && !self.ui.prompt.text.is_empty();
        if self.ui.mode != Mode::Help && !typing {
            if let Some(kind) = self.desk.stop_watch() {
                self.push_output(Line::styled(
                    format!("── watch of {kind} stopped"),
                    Role::Dim,
                ));
                self.show_output_from(self.ui.output.len().saturating_sub(1));
                return;
            }
        }
        match self.ui.mode {
            Mode::Help => self.ui.mode = self.ui.prev_mode,
            Mode::Command => {
                // A long output took the screen by itself: the Esc that leaves an empty
                // command line brings the panes back too (one Esc, as the book says).
                if self.ui.prompt.text.is_empty() && self.ui.focus == Pane::Output {
                    if let Some(p) = self.ui.focus_stack.pop() {
                        self.ui.focus = p;
                    }
                }
                self.ui.mode = Mode::Normal;
                self.ui.colon = false;
                self.ui.candidates.clear();
                if self.ui.prompt.refused {
                    self.ui.prompt.set("");
                }
            }
            Mode::Filter => {
                self.ui.filter = Prompt::default();
                self.ui.mode = Mode::Normal;
                self.refresh_filter();
            }
            Mode::Normal if self.ui.jump.as_ref().is_some_and(|j| j.describing) => {
                if let Some(j) = self.ui.jump.take() {
                    let at = j.objects.get(j.selected).cloned();
                    self.list_kind(&j.word, j.namespace.as_deref(), at.as_ref());
                }
            }
            Mode::Normal if self.ui.jump.is_some() => {
                self.ui.jump = None;
                if let Some(p) = self.ui.focus_stack.pop() {
                    self.ui.focus = p;
                }
            }
            Mode::Normal => {
                if let Some(p) = self.ui.focus_stack.pop() {
                    self.ui.focus = p;
                } else if !self.ui.filter.text.is_empty() {
                    self.ui.filter = Prompt::default();
                    self.refresh_filter();
                } else if self.ui.sel_call.is_some() {
                    self.ui.sel_call = None;
                } else {
                    self.ui.mode = Mode::Command;
                }
            }
        }
    }

    fn flash(&mut self, text: String, level: FlashLevel) {
        self.ui.flash = Some(Flash {
            text,
            level,
            age: 0,
        });
    }

    fn edit(&mut self, e: Edit) {
        match self.ui.mode {
            Mode::Command => {
                // `:` on an empty line is the k9s habit of opening the prompt (and then a
                // kind's name lists it: `:pods`); `?` asks for help.
                if self.ui.prompt.text.is_empty() {
                    if e == Edit::Insert(':') {
                        self.ui.colon = true;
                        return;
                    }
                    if e == Edit::Insert('?') {
                        self.update(Action::ToggleHelp);
                        return;
                    }
                }
                let was = self.ui.prompt.refused;
                self.ui.prompt.edit(e);
                if self.ui.prompt.refused {
                    // Each further character costs a look at this flag: a runaway paste
                    // typed in one key at a time is read through at once.
                    if !was {
                        self.flash(lab_engine::command::typed_line_too_long(), FlashLevel::Err);
                    }
                    return;
                }
                self.ui.candidates.clear();
                self.update_hint();
            }
            Mode::Filter => {
                let was = self.ui.filter.refused;
                self.ui.filter.edit(e);
                if self.ui.filter.refused {
                    if !was {
                        self.flash(lab_engine::command::typed_line_too_long(), FlashLevel::Err);
                    }
                    return;
                }
                self.refresh_filter();
            }
            _ => {}
        }
    }

    /// Pasted text goes in as typed (`:` and `?` on an empty prompt keep their meaning),
    /// but in one edit: the usage hint and the filter are worked out once, not once per
    /// character, so a long paste (thousands of characters) is in place before the next
    /// key, Enter included, is read.
    fn paste(&mut self, text: &str) {
        let room = match self.ui.mode {
            Mode::Filter => self.ui.filter.text.len(),
            _ => self.ui.prompt.text.len(),
        };
        if room + text.len() > lab_engine::command::MAX_LINE {
            // Refused whole, before any of it goes in.
            self.flash(
                lab_engine::command::line_too_long(room + text.len()),
                FlashLevel::Err,
            );
            return;
        }
        let mut chars = text.chars();
        let Some(c) = chars.next() else { return };
        self.edit(Edit::Insert(c));
        let rest = chars.as_str();
        if rest.is_empty() {
            return;
        }
        let inserted = match self.ui.mode {
            Mode::Command => {
                let done = self.ui.prompt.insert_str(rest);
                self.ui.candidates.clear();
                self.update_hint();
                done
            }
            Mode::Filter => {
                let done = self.ui.filter.insert_str(rest);
                self.refresh_filter();
                done
            }
            _ => true,
        };
        debug_assert!(inserted, "the length was checked above");
    }

    fn update_hint(&mut self) {
        let head = &self.ui.prompt.text[..self.ui.prompt.cursor];
        self.ui.hint = super::complete::usage_hint(head);
    }

    fn complete(&mut self) {
        let p = &self.ui.prompt;
        let head = p.text[..p.cursor].to_string();
        let rest = p.text[p.cursor..].to_string();
        let lessons = self.desk.lessons.parsed().ids();
        let c = super::complete::complete(&self.desk.lab, &lessons, &head, self.host.as_ref());
        if let Some(new_head) = c.apply(&head) {
            self.ui.prompt.text = format!("{new_head}{rest}");
            self.ui.prompt.cursor = new_head.len();
        }
        let nothing = c.candidates.is_empty();
        self.ui.candidates = if c.candidates.len() > 1 {
            c.candidates
        } else {
            Vec::new()
        };
        self.update_hint();
        if nothing {
            self.ui.hint = Some("(nothing to complete here)".to_string());
        }
    }

    fn history(&mut self, d: i32) {
        self.ui.colon = false;
        let n = self.ui.history.len();
        if n == 0 {
            return;
        }
        let pos = match (self.ui.history_pos, d < 0) {
            (None, true) => {
                self.ui.draft = self.ui.prompt.text.clone();
                Some(n - 1)
            }
            (None, false) => None,
            (Some(p), true) => Some(p.saturating_sub(1)),
            (Some(p), false) if p + 1 < n => Some(p + 1),
            (Some(_), false) => None,
        };
        self.ui.history_pos = pos;
        let text = match pos {
            Some(p) => self.ui.history[p].clone(),
            None => self.ui.draft.clone(),
        };
        self.ui.prompt.set(&text);
        self.ui.candidates.clear();
        self.update_hint();
    }

    /// Fill a hotkey's command template from the selection.
    pub fn fill(&self, template: &str) -> Result<String, String> {
        let mut line = template.to_string();
        let nodes: Vec<&str> = self.desk.lab.node_names().collect();
        let need_node = || "no nodes yet — add one: node add node-1".to_string();
        if line.contains("{node}") {
            let n = self.ui.sel_node.clone().ok_or_else(need_node)?;
            line = line.replace("{node}", &n);
        }
        for (ph, step) in [("{next_node}", 1i64), ("{prev_node}", -1)] {
            if line.contains(ph) {
                if nodes.is_empty() {
                    return Err(need_node());
                }
                let at = self
                    .ui
                    .sel_node
                    .as_ref()
                    .and_then(|s| nodes.iter().position(|n| *n == s));
                let len = nodes.len() as i64;
                let i = match at {
                    Some(i) => (i as i64 + step).rem_euclid(len),
                    None => 0,
                };
                line = line.replace(ph, nodes[i as usize]);
            }
        }
        if line.contains("{prev_event}") || line.contains("{next_event}") {
            let pos = self.desk.lab.position();
            if line.contains("{prev_event}") {
                let n = pos.at.checked_sub(1).ok_or_else(|| {
                    format!(
                        "at the start of the timeline: nothing earlier (`]` goes forward; {} event{} in all)",
                        pos.of,
                        if pos.of == 1 { "" } else { "s" }
                    )
                })?;
                line = line.replace("{prev_event}", &n.to_string());
            }
            if line.contains("{next_event}") {
                if !pos.rewound() {
                    return Err(format!(
                        "at the present (event {}): nothing later (`[` goes back)",
                        pos.of
                    ));
                }
                line = line.replace("{next_event}", &(pos.at + 1).to_string());
            }
        }
        if line.contains("{pod}") || line.contains("{pod_ns}") {
            let (ns, name) = self.ui.sel_pod.clone().ok_or_else(|| {
                "select a pod first (Topology: ↑/↓), or create one: pod create web --node node-1"
                    .to_string()
            })?;
            line = line.replace("{pod_ns}", &ns).replace("{pod}", &name);
        }
        if line.contains("{wire}") {
            let seq = self
                .current_call()
                .and_then(|c| model::wire_range(&self.desk.lab, c))
                .map(|(first, _)| first)
                .ok_or_else(|| {
                    "no plugin call selected (Calls: ↑/↓ to an `exec` line), or no calls yet"
                        .to_string()
                })?;
            line = line.replace("{wire}", &seq.to_string());
        }
        Ok(line)
    }

    /// The call the wire pane shows: the selected one, else the one it follows, else the
    /// newest call with wire records.
    pub fn current_call(&self) -> Option<u64> {
        self.ui
            .sel_call
            .or(self
                .ui
                .wire_follow
                .filter(|c| self.desk.lab.calls().get(*c).is_some()))
            .or_else(|| model::latest_call_with_wire(&self.desk.lab, 256))
    }

    /// Among the calls from `mark` on: the first plugin execution that failed, else the
    /// newest runtime CNI call (its whole chain), else the newest call with wire records.
    fn interesting_call(&self, mark: u64) -> Option<u64> {
        let lab = &self.desk.lab;
        let since = mark..lab.calls().next_seq();
        let has_wire = |s: &u64| model::wire_range(lab, *s).is_some();
        let is = |s: &u64, f: &dyn Fn(&lab_engine::record::CallEvent) -> bool| {
            lab.calls().get(*s).is_some_and(f)
        };
        let failed = since
            .clone()
            .filter(has_wire)
            .find(|s| is(s, &|e| e.level() == lab_engine::record::Level::Warning));
        let chain = since
            .clone()
            .rev()
            .filter(has_wire)
            .find(|s| is(s, &|e| e.cni_op().is_some()));
        failed.or(chain).or_else(|| since.rev().find(has_wire))
    }

    // -----------------------------------------------------------------------------------
    // Running commands.

    /// `lesson play ID`: reset the cluster and queue the lesson's events; each tick shows
    /// the next one, typing commands into the prompt at the lesson's pace.
    fn start_playback(&mut self, id: &str, opts: lab_engine::lesson::play::PlayOptions) {
        use lab_engine::lesson::play::plan;
        let speed = opts.speed;
        if !(speed.is_finite() && speed > 0.0) {
            self.push_output(Line::styled(
                format!("error: invalid --speed {speed}: expected a number above 0"),
                Role::Bad,
            ));
            return;
        }
        let lesson = match self.desk.lessons.find_variant(id, opts.variant) {
            Ok(l) => l,
            Err(e) => {
                self.push_output(Line::styled(format!("error: {e}"), Role::Bad));
                return;
            }
        };
        let left = self.desk.reset_keeping_lessons(false);
        for l in left.into_lines() {
            self.push_output(l);
        }
        // The fresh cluster is on screen before the first command runs.
        self.follow_lab();
        self.playback = Some(Playback::new(
            plan(&lesson, opts),
            format!("lesson play: {}", lesson.title),
            true,
            lesson.steps.len(),
        ));
        // The step's text goes to the Lesson pane beside the Output: an output that took
        // the screen before the playback gives it back.
        if self.ui.focus == Pane::Output {
            self.ui.focus = self.ui.focus_stack.pop().unwrap_or(Pane::Topology);
        }
        self.ui.mode = Mode::Command;
        self.ui.hint = None;
        self.ui.candidates.clear();
        self.show_playback();
    }

    /// The lesson pane shows the playback's step (or the lesson in progress once it ends).
    fn show_playback(&mut self) {
        match &self.playback {
            Some(p) => {
                let mut view = p.view.clone();
                view.position = match p.at() {
                    None => p.cue().to_string(),
                    Some(at) => format!("{at} · {}", p.cue()),
                };
                self.lesson = Some(view);
            }
            None => {
                let view = model::lesson_view(&self.desk.lab, &self.desk.lessons, None);
                self.set_lesson(view);
                self.follow_step_focus();
            }
        }
    }

    /// `play FILE [--step|--pace D]`: queue the script's events (captions from its
    /// comments, commands typed into the prompt and run, paced); the cluster stays as it is.
    fn start_script_playback(&mut self, a: &lab_engine::command::grammar::PlayArgs) {
        match self.desk.script_plan(a) {
            Ok(events) => {
                self.push_output(Line::styled(format!("── playing {}", a.file), Role::Header));
                self.playback = Some(Playback::new(events, format!("play {}", a.file), false, 0));
                self.ui.mode = Mode::Command;
                self.ui.hint = None;
                self.ui.candidates.clear();
                self.show_playback();
            }
            Err(e) => self.push_output(error_line_as(e.prefix(), &e.message)),
        }
    }

    /// Advance playback by one tick (called every ~100–250 ms).
    fn playback_tick(&mut self) {
        use lab_engine::lesson::play::PlayEvent;
        let Some(mut p) = self.playback.take() else {
            return;
        };
        if p.waiting_key {
            self.playback = Some(p);
            return;
        }
        if p.wait_ticks > 0 {
            p.wait_ticks -= 1;
            self.playback = Some(p);
            return;
        }
        loop {
            let Some(ev) = p.events.front().cloned() else {
                self.push_output(Line::styled("── playback finished", Role::Dim));
                self.show_playback();
                return;
            };
            match ev {
                PlayEvent::Title(h) => {
                    self.push_output(Line::styled(format!("── {h}"), Role::Header));
                    p.title(&h);
                    p.events.pop_front();
                }
                PlayEvent::Heading(h) => {
                    self.push_output(Line::styled(format!("── {h}"), Role::Header));
                    p.heading(&h);
                    p.events.pop_front();
                }
                PlayEvent::Text(t) => {
                    let t = lab_engine::lesson::facts::fill(&self.desk.lab, &t);
                    // A lesson's text stays in the Lesson pane beside the output (a
                    // script's captions are the output's narration).
                    // Prose: the Output pane joins a paragraph's lines and wraps it to
                    // its own width (the source wraps at ~90 columns).
                    if !(p.lesson_code && view::lesson_on_screen(self, self.ui.area)) {
                        for l in t.lines() {
                            self.push_output(Line::styled(l, Role::Prose));
                        }
                    }
                    p.text(&t);
                    p.events.pop_front();
                }
                PlayEvent::Task(t) => {
                    let t = lab_engine::lesson::facts::fill(&self.desk.lab, &t);
                    if !(p.lesson_code && view::lesson_on_screen(self, self.ui.area)) {
                        self.push_output(Line::styled(format!("Task: {t}"), Role::Prose));
                    }
                    p.task(&t);
                    p.events.pop_front();
                }
                PlayEvent::Pause { millis } => {
                    p.events.pop_front();
                    p.wait_ticks = millis.div_ceil(PLAYBACK_TICK_MS);
                    break;
                }
                PlayEvent::WaitForKey => {
                    p.events.pop_front();
                    p.waiting_key = true;
                    self.ui.prompt.set("");
                    self.push_output(Line::styled("  [Enter: next · Esc: stop]", Role::Dim));
                    break;
                }
                PlayEvent::Type {
                    command,
                    millis_per_char,
                    expect_failure,
                } => {
                    let per_tick = usize::try_from(PLAYBACK_TICK_MS / millis_per_char.max(1))
                        .unwrap_or(1)
                        .max(1);
                    let total = command.chars().count();
                    p.typed = (p.typed + per_tick).min(total);
                    let shown: String = command.chars().take(p.typed).collect();
                    self.ui.prompt.set(&shown);
                    self.ui.hint = None;
                    if p.typed >= total {
                        p.events.pop_front();
                        p.typed = 0;
                        self.ui.prompt.set("");
                        let lesson_code = p.lesson_code;
                        self.playback = Some(p);
                        let ran = if lesson_code {
                            self.run_lesson_code(&command)
                        } else {
                            self.run_command(&command)
                        };
                        if (ran == Ran::Failed) != expect_failure {
                            // The rest was written for what this command should have done.
                            self.playback = None;
                            self.push_output(lab_engine::lesson::play::stopped_line(
                                &command,
                                expect_failure,
                            ));
                        }
                        self.show_playback();
                        return;
                    }
                    break;
                }
            }
        }
        self.playback = Some(p);
        self.show_playback();
    }

    /// `clear` (and Ctrl-L): an empty Output pane, scrolled to the bottom.
    fn clear_output(&mut self) {
        self.ui.output.clear();
        self.ui.scroll[Pane::Output.index()] = 0;
    }

    /// An error into the output (its first line marked `✗` and its prefix, the rest
    /// indented under it) and its first line in the flash.
    fn push_error(&mut self, prefix: &str, message: &str) {
        for (i, part) in message.lines().enumerate() {
            self.push_output(if i == 0 {
                error_line_as(prefix, part)
            } else {
                Line::styled(format!("         {part}"), Role::Bad)
            });
        }
        let first = message.lines().next().unwrap_or("").to_string();
        self.flash(format!("✗ {first}"), FlashLevel::Err);
    }

    fn push_output(&mut self, line: Line) {
        // A lesson's paragraph arrives hard-wrapped at its source's width: join its lines,
        // so the Output pane wraps the paragraph once, at its own width.
        if let Some(text) = prose_continuation(&line)
            && let Some(prev) = self.ui.output.back_mut()
            && prose_continuation(prev).is_some()
            && let Some(span) = prev.spans.last_mut()
        {
            span.text.push(' ');
            span.text.push_str(text);
            return;
        }
        self.ui.output_pushed += 1;
        if self.ui.output.len() == OUTPUT_KEEP {
            self.ui.output.pop_front();
        }
        self.ui.output.push_back(line);
    }

    /// A command from a lesson's code block (playback): refused as `lesson::guard` says
    /// (and a lesson cannot quit the dashboard); otherwise run as if typed, with the disk
    /// out of reach (see `Desk::execute_lesson_code`).
    fn run_lesson_code(&mut self, line: &str) -> Ran {
        let refusal = lab_engine::lesson::guard::refusal_of_line(line).or_else(|| {
            matches!(line.trim(), "quit" | "exit" | "q" | "q!")
                .then(|| "a lesson cannot quit the lab".to_string())
        });
        if let Some(r) = refusal {
            self.push_output(
                Line::new()
                    .push("lab> ", Role::Actor)
                    .push(line.to_string(), Role::Name),
            );
            self.push_output(error_line(&r));
            self.flash(format!("✗ {r}"), FlashLevel::Err);
            return Ran::Failed;
        }
        let saved = self.desk.lab.read_no_files();
        let ran = self.run_command(line);
        self.desk.lab.restore_files(saved);
        ran
    }

    /// The panes follow a lab that changed outside a typed command (a playback's fresh
    /// cluster, calls that reached `csi serve`): the pod index, the topology's rows, the
    /// selection, the filter and the routes.
    fn follow_lab(&mut self) {
        self.derived.pods.sync(&self.desk.lab);
        self.refresh_topo();
        self.fix_selection();
        self.refresh_filter();
        self.refresh_routes();
    }

    /// Run the calls that reached `csi serve`'s socket since the last tick, as `csi call`
    /// lines do: their call-log lines in the output pane, the panes following the state.
    fn serve_tick(&mut self) {
        let call_mark = self.desk.lab.calls().next_seq();
        let arrived = self.host.tick(&mut self.desk.lab);
        if arrived.is_empty() {
            return;
        }
        let pushed_before = self.ui.output_pushed;
        for l in arrived {
            self.push_output(l);
        }
        self.follow_lab();
        if let Some(c) = self.interesting_call(call_mark) {
            self.ui.wire_follow = Some(c);
        }
        let new = usize::try_from(self.ui.output_pushed - pushed_before).unwrap_or(usize::MAX);
        self.show_output_from(self.ui.output.len().saturating_sub(new));
    }

    /// Run one command line through `Desk::execute`, show what it printed, and let the
    /// selection follow it. `quit`, `exit` and `q` leave the dashboard. Says whether the
    /// command failed (help and the dashboard's own words do not).
    pub fn run_command(&mut self, line: &str) -> Ran {
        let mut line = line.trim();
        if line.is_empty() {
            return Ran::Done;
        }
        if self.ui.history.last().map(String::as_str) != Some(line) {
            if self.ui.history.len() == HISTORY_KEEP {
                self.ui.history.remove(0);
            }
            self.ui.history.push(line.to_string());
        }
        // Another command leaves a `:KIND` listing (Enter's `describe` keeps it: `open`).
        self.ui.jump = None;
        if let Some(rest) = line.strip_prefix(':') {
            let rest = rest.trim();
            if let Some((word, namespace)) = kind_listing(&self.desk.lab, rest) {
                self.push_output(echo(line));
                self.list_kind(word, namespace, None);
                return Ran::Done;
            }
            // `:` and a command (a line from the history, a script): the command.
            line = rest;
            if line.is_empty() {
                return Ran::Done;
            }
        }
        if matches!(line, "quit" | "exit" | "q" | "q!") {
            self.ui.quit = true;
            return Ran::Done;
        }
        if lab_engine::command::help::is_clear_word(line) {
            self.clear_output();
            return Ran::Done;
        }
        match lab_engine::lesson::play::LivePlayback::of(line) {
            Some(lab_engine::lesson::play::LivePlayback::Lesson { id, options }) => {
                self.start_playback(&id, options);
                return Ran::Done;
            }
            Some(lab_engine::lesson::play::LivePlayback::Script(a)) => {
                self.start_script_playback(&a);
                return Ran::Done;
            }
            None => {}
        }
        if let Some(said) = self.host.control(&self.desk.lab, line) {
            self.push_output(
                Line::new()
                    .push("lab> ", Role::Actor)
                    .push(line.to_string(), Role::Name),
            );
            let ran = match said {
                Ok(said) => {
                    self.push_output(Line::plain(said));
                    self.flash(format!("✓ {line}"), FlashLevel::Info);
                    Ran::Done
                }
                Err(e) => {
                    self.push_output(error_line(&e));
                    self.flash(format!("✗ {e}"), FlashLevel::Err);
                    Ran::Failed
                }
            };
            self.show_output_from(self.ui.output.len().saturating_sub(2));
            return ran;
        }
        let pushed_before = self.ui.output_pushed;
        self.push_output(
            Line::new()
                .push("lab> ", Role::Actor)
                .push(line.to_string(), Role::Name),
        );
        let snapshot = self.ipam_snapshot();
        let wire_mark = self.desk.lab.wire().next_seq();
        let call_mark = self.desk.lab.calls().next_seq();
        let position = self.desk.lab.position();
        let ran = match self.desk.execute(line) {
            Ok(out) => {
                let n = out.len();
                // A lesson's teaching text goes to the Lesson pane alone when it is on screen.
                let beside = self.desk.lessons.session.is_some()
                    && view::lesson_on_screen(self, self.ui.area);
                let mut noted = false;
                for l in out.into_lines() {
                    if beside
                        && l.spans.iter().all(|s| s.role == Role::Prose)
                        && !l.spans.is_empty()
                    {
                        if !noted {
                            self.push_output(Line::styled(LESSON_TEXT_BESIDE, Role::Dim));
                            noted = true;
                        }
                        continue;
                    }
                    self.push_output(l);
                }
                if n == 0 {
                    self.push_output(Line::styled("(done, nothing printed)", Role::Dim));
                }
                self.flash(format!("✓ {line}"), FlashLevel::Info);
                Ran::Done
            }
            Err(e) => {
                let prefix = e.prefix();
                for l in e.output.into_lines() {
                    self.push_output(l);
                }
                if e.is_help {
                    self.flash(format!("✓ {line}"), FlashLevel::Info);
                    Ran::Done
                } else {
                    self.push_error(prefix, &e.message);
                    Ran::Failed
                }
            }
        };
        self.derived.pods.sync(&self.desk.lab);
        self.refresh_topo();
        self.observe(line, wire_mark);
        self.fix_selection();
        self.refresh_filter();
        self.diff_ipam(snapshot, wire_mark);
        self.refresh_routes();
        if self.desk.lab.calls().next_seq() < call_mark {
            self.ui.wire_follow = None; // the lab was reset
        }
        if let Some(c) = self.interesting_call(call_mark) {
            self.ui.wire_follow = Some(c);
        }
        if self
            .ui
            .sel_call
            .is_some_and(|c| self.desk.lab.calls().get(c).is_none())
        {
            self.ui.sel_call = None;
        }
        // Where this command's echo is now (older lines may have been dropped).
        let new = usize::try_from(self.ui.output_pushed - pushed_before).unwrap_or(usize::MAX);
        let echo = self.ui.output.len().saturating_sub(new);
        let changed = self.desk.lab.position() != position;
        self.show_output(echo, changed);
        // The lesson pane follows the lesson player (started, advanced, left by a command).
        let hint = if line == "hint" {
            self.ui.output.back().map(|l| l.text())
        } else {
            None
        };
        if self.playback.is_none() {
            // (A playback's step stays in the pane meanwhile: `show_playback`.)
            self.set_lesson(model::lesson_view(&self.desk.lab, &self.desk.lessons, hint));
            self.follow_step_focus();
        }
        self.follow_stepping();
        ran
    }

    /// While a trace is stepped, the selection follows the hop: its pod (in Topology, and
    /// its table in Routes) or its node.
    fn follow_stepping(&mut self) {
        if let Some(c) = self.desk.stepping().and_then(|s| s.csi()) {
            // A CSI call: the Volumes pane (its row highlighted) and the call's node.
            let node = c.step().change.as_ref().and_then(|ch| ch.node.clone());
            if self.ui.focus == Pane::Output || view::in_grid(self.ui.focus) {
                self.ui.focus = Pane::Volumes;
            }
            if let Some(node) = node {
                self.select_node(&node);
            }
            return;
        }
        let Some(at) = self
            .desk
            .stepping()
            .and_then(|s| s.packet())
            .map(|s| s.hop().at.clone())
        else {
            return;
        };
        // The Step panel is in the Output's place: the panes it follows come back in view.
        if self.ui.focus == Pane::Output {
            self.ui.focus = self.ui.focus_stack.pop().unwrap_or(Pane::Topology);
        }
        match at {
            lab_engine::net::hop::Place::Pod {
                namespace, name, ..
            } => self.select_pod(&(namespace, name)),
            lab_engine::net::hop::Place::Node(node) => {
                self.select_node(&node);
            }
        }
        self.refresh_routes();
    }

    /// Scroll the output so the command's echo is at the top if what it printed does not
    /// fit, else show the bottom; in the compact layout, bring the output into view when it
    /// is longer than the strip under the pane.
    fn show_output_from(&mut self, echo: usize) {
        self.show_output(echo, false);
    }

    /// [`App::show_output_from`] for a command that `changed` the cluster (it made an
    /// event): in the two-by-two grid (100×30) its output stays in the strip under the
    /// state panes, which show
    /// what it changed (the strip's `↓ N more` cue, PgDn or Alt-7 read the rest); only a
    /// long text that changed nothing (`help`, `describe`) takes the screen.
    fn show_output(&mut self, echo: usize, changed: bool) {
        let screen = view::layout(self, self.ui.area);
        let strip = screen.inner(Pane::Output, &self.theme).unwrap_or_default();
        // The strip as it is without the timeline bar, which borrows its last row: the
        // first event (which brings the bar) must not make its own output take over.
        let strip_rows = strip.height as usize + usize::from(screen.timeline.is_some());
        let new_lines = self.ui.output.len().saturating_sub(echo);
        let compact = view::is_compact(self.ui.area);
        // The two-by-two grid keeps the cluster in view for what a command prints in a few
        // screens of the strip (a pod's events); a longer text (help, describe) takes over.
        let room = if view::is_grid(self.ui.area) && self.ui.area.width >= view::GRID_TWO_COLUMNS {
            3 * strip_rows
        } else {
            strip_rows
        };
        // (A stepped hop is in the Step panel in the strip's place: the panes stay. A
        // lesson's playback keeps its step's text in the Lesson pane beside the Output,
        // whose "↓ more" cue says what is below.)
        let stepping = self.desk.stepping().is_some();
        let playing_lesson = self.playback.as_ref().is_some_and(|p| p.lesson_code);
        // (At 80×24 the strip is four rows: a pod's call log takes the screen there.)
        let keeps_panes =
            changed && view::is_grid(self.ui.area) && self.ui.area.width >= view::GRID_TWO_COLUMNS;
        if compact
            && self.ui.focus != Pane::Output
            && new_lines > room
            && !stepping
            && !playing_lesson
            && !keeps_panes
        {
            self.ui.focus_stack.push(self.ui.focus);
            self.ui.focus = Pane::Output;
        }
        let area = self.viewport(Pane::Output);
        let (w, h) = (area.width.max(1) as usize, area.height.max(1) as usize);
        let mut rows = 0;
        let mut end = echo;
        while end < self.ui.output.len() {
            let n = view::output::wrapped_height(&self.ui.output[end], w);
            if rows + n > h {
                break;
            }
            rows += n;
            end += 1;
        }
        self.ui.scroll[Pane::Output.index()] = self.ui.output.len() - end;
    }

    fn observe(&mut self, line: &str, wire_mark: u64) {
        use lab_engine::command::grammar::{NodeCmd, PodCmd, ShowCmd};
        use lab_engine::command::{Command, parse, strip_comment};
        let cmd = match parse(strip_comment(line)) {
            Ok(Some(c)) => c,
            _ => return,
        };
        match cmd {
            Command::Show(ShowCmd::Ipam { node: Some(n), .. })
            | Command::Show(ShowCmd::Routes { node: Some(n), .. })
            | Command::Show(ShowCmd::Iptables { node: n, .. })
            | Command::Show(ShowCmd::Ipset { node: n }) => self.select_node(&n),
            Command::Node(NodeCmd::Add { name, .. }) => self.select_node(&name),
            Command::Describe(d) => {
                use lab_engine::cluster::ApiKind;
                match (lab_engine::resource::lookup(&d.kind), &d.names[..]) {
                    (Some(ApiKind::Pod), [name]) => self.select_pod(&(d.ns.clone(), name.clone())),
                    (Some(ApiKind::Node), [name]) => self.select_node(name),
                    _ => {}
                }
            }
            Command::Pod(PodCmd::Create(a)) => self.select_pod(&(a.ns, a.name)),
            _ => {
                // Follow the node where the plugins just ran, when it is one node.
                let nodes: BTreeSet<&str> = self
                    .desk
                    .lab
                    .wire()
                    .iter()
                    .rev()
                    .take_while(|(s, _)| *s >= wire_mark)
                    .filter_map(|(_, c)| c.node())
                    .collect();
                if nodes.len() == 1
                    && let Some(n) = nodes.first()
                {
                    let n = n.to_string();
                    self.select_node(&n);
                }
            }
        }
    }

    /// Select a node (its first pod too, unless the selected pod is already on it).
    pub fn select_node(&mut self, node: &str) {
        if !self.groups().contains_key(node) && !self.derived.pods.by_node.contains_key(node) {
            return;
        }
        self.ui.sel_node = Some(node.to_string());
        let pod_on_node = self
            .ui
            .sel_pod
            .as_ref()
            .is_some_and(|k| self.desk.lab.pod_node(k) == Some(node));
        if !pod_on_node {
            self.ui.sel_pod = self.groups().get(node).and_then(|v| v.first()).cloned();
        }
        self.reveal_selection();
    }

    /// Select a pod (and its node).
    pub fn select_pod(&mut self, key: &PodKey) {
        if let Some(node) = self.desk.lab.pod_node(key) {
            self.ui.sel_node = Some(node.to_string());
            self.ui.sel_pod = Some(key.clone());
            self.reveal_selection();
        }
    }

    /// Keep the selection pointing at things that exist.
    fn fix_selection(&mut self) {
        if let Some(k) = &self.ui.sel_pod
            && self.desk.lab.pod_node(k).is_none()
        {
            self.ui.sel_pod = None;
        }
        let node_ok = self
            .ui
            .sel_node
            .as_ref()
            .is_some_and(|n| self.derived.pods.by_node.contains_key(n));
        if !node_ok {
            // A real node first, not the group of pods not scheduled yet.
            let keys = || self.derived.pods.by_node.keys();
            self.ui.sel_node = keys()
                .find(|n| !n.is_empty())
                .or_else(|| keys().next())
                .cloned();
        }
        if self.ui.sel_pod.is_none()
            && let Some(n) = &self.ui.sel_node
        {
            self.ui.sel_pod = self.groups().get(n).and_then(|v| v.first()).cloned();
        }
    }

    fn ipam_snapshot(&self) -> Option<IpamSnapshot> {
        let node = self.ui.sel_node.clone()?;
        let stores = node_view::ipam_files(&self.desk.lab, &node)?;
        Some((node, stores))
    }

    fn diff_ipam(&mut self, before: Option<IpamSnapshot>, wire_mark: u64) {
        let node = self.ui.sel_node.clone().unwrap_or_default();
        let mut ch = IpamChanges {
            node: node.clone(),
            ..IpamChanges::default()
        };
        let now = node_view::ipam_dirs(&self.desk.lab, &node).unwrap_or_default();
        match before {
            Some((n, old)) if n == node => {
                for (net, store) in &now {
                    let prev = old.get(*net);
                    for lease in store.leases_from(0) {
                        if prev.and_then(|p| p.leases.get(&lease.ip)) != Some(&lease) {
                            ch.added.insert((net.to_string(), lease.ip));
                        }
                    }
                    for (idx, ip) in store.cursors() {
                        if prev.and_then(|p| p.cursors.get(&idx)) != Some(&ip) {
                            ch.cursors.insert((net.to_string(), idx));
                        }
                    }
                }
                // A lease file goes only through a plugin run on the node (host-local's DEL,
                // a GC): without one (a `reset` wiped the node) nothing was released.
                let ran_here = self
                    .desk
                    .lab
                    .wire()
                    .iter()
                    .rev()
                    .take_while(|(s, _)| *s >= wire_mark)
                    .any(|(_, c)| matches!(c, WireRecord::Cni(_)) && c.node() == Some(&node));
                for (net, files) in old.into_iter().filter(|_| ran_here) {
                    for (ip, lease) in files.leases {
                        if now.get(net.as_str()).is_none_or(|s| !s.is_leased(&ip)) {
                            ch.removed.push((net.clone(), lease));
                        }
                    }
                }
            }
            _ => {
                // The selection moved to this node with the command: what the command's
                // plugin calls wrote here is what changed.
                let ids: BTreeSet<&str> = self
                    .desk
                    .lab
                    .wire()
                    .iter()
                    .rev()
                    .take_while(|(s, _)| *s >= wire_mark)
                    .filter(|(_, c)| c.node() == Some(node.as_str()))
                    .map(|(_, c)| c.container_id())
                    .collect();
                for (net, store) in &now {
                    for lease in store.leases_from(0) {
                        if ids.contains(lease.container_id.as_str()) {
                            ch.added.insert((net.to_string(), lease.ip));
                        }
                    }
                    if !ids.is_empty() {
                        for (idx, _) in store.cursors() {
                            ch.cursors.insert((net.to_string(), idx));
                        }
                    }
                }
            }
        }
        self.derived.ipam = ch;
    }

    /// Refresh what follows the groups the topology shows: the filter's groups and calls,
    /// and the topology's rows.
    fn refresh_filter(&mut self) {
        let had = self.derived.filtered.is_some();
        self.filter_groups();
        // Without a filter before or after, the groups are the pods by node, whose rows
        // were rebuilt when they changed.
        if had || self.derived.filtered.is_some() {
            self.refresh_topo();
        }
    }

    /// Rebuild the topology's rows of the groups shown (O(nodes), once per command: a
    /// frame then reads only the boxes in view).
    fn refresh_topo(&mut self) {
        let mut topo = std::mem::take(&mut self.derived.topo);
        topo.rebuild(self.groups(), &self.derived.pods);
        self.derived.topo = topo;
        #[cfg(debug_assertions)]
        self.assert_topo_matches();
    }

    /// Debug builds: the topology's rows as a walk over every group counts them.
    #[cfg(debug_assertions)]
    fn assert_topo_matches(&self) {
        let t = &self.derived.topo;
        let mut row = 0;
        let mut pods = 0;
        for (i, (node, list)) in self.groups().iter().enumerate() {
            assert_eq!(t.names.get(i), Some(node), "topology rows: group {i}");
            assert_eq!(
                t.start(i, self.theme.airy),
                row,
                "topology rows: {node}'s box"
            );
            assert_eq!(t.pods_before[i], pods, "topology rows: pods before {node}");
            row += self.node_rows(node, list);
            pods += list.len();
        }
        assert_eq!(self.topo_rows(), row, "topology rows: the total");
        assert_eq!(t.pods(), pods, "topology rows: the pods");
        let nodes = self.groups().keys().filter(|n| !n.is_empty()).count();
        assert_eq!(t.nodes(), nodes, "topology rows: the nodes");
    }

    /// The filter's groups of pods and its calls (none without a filter).
    fn filter_groups(&mut self) {
        let f = self.ui.filter.text.trim().to_lowercase();
        if f.is_empty() {
            self.derived.filtered = None;
            self.derived.calls = None;
            return;
        }
        let mut groups: BTreeMap<String, Vec<PodKey>> = BTreeMap::new();
        for (node, pods) in &self.derived.pods.by_node {
            let node_hit = node.to_lowercase().contains(&f);
            let hits: Vec<PodKey> = pods
                .iter()
                .filter(|k| {
                    node_hit
                        || k.1.to_lowercase().contains(&f)
                        || self
                            .desk
                            .lab
                            .pod_ip(k)
                            .flatten()
                            .is_some_and(|ip| ip.to_string().contains(&f))
                })
                .cloned()
                .collect();
            if node_hit || !hits.is_empty() {
                groups.insert(node.clone(), hits);
            }
        }
        self.derived.filtered = Some(groups);
        let calls = self
            .desk
            .lab
            .calls()
            .iter()
            .filter(|(_, e)| {
                e.actor().to_string().to_lowercase().contains(&f)
                    || e.action().to_lowercase().contains(&f)
                    || e.detail().to_lowercase().contains(&f)
            })
            .map(|(s, _)| s)
            .collect();
        self.derived.calls = Some(calls);
        self.ui.scroll[Pane::Topology.index()] = 0;
        self.ui.scroll[Pane::Calls.index()] = 0;
    }

    // -----------------------------------------------------------------------------------
    // k9s's resource view: `:KIND` lists a kind, Enter describes the selected row.

    /// Whether a `:KIND` listing is in the output with a selected row (not yet described).
    fn listing_active(&self) -> bool {
        self.ui.mode == Mode::Normal && self.ui.jump.as_ref().is_some_and(|j| !j.describing)
    }

    /// List the kind `word` names (`get KIND -o wide` in `namespace`, or `-A` when
    /// `None`) into the output, its first row selected (or the row of `at`), and put the
    /// keys on it; a word that names no kind gets the registry's answer (its
    /// did-you-mean).
    fn list_kind(
        &mut self,
        word: &str,
        namespace: Option<&str>,
        at: Option<&lab_engine::cluster::ObjectRef>,
    ) {
        let pushed_before = self.ui.output_pushed;
        let listing = match lab_engine::resource::listing(&self.desk.lab, word, namespace) {
            Ok(l) => l,
            Err(e) => {
                self.push_error(e.prefix(), &e.message);
                self.show_output_from(self.ui.output.len().saturating_sub(
                    usize::try_from(self.ui.output_pushed - pushed_before).unwrap_or(usize::MAX),
                ));
                return;
            }
        };
        let plural = lab_engine::resource::plural(listing.kind);
        if listing.objects.is_empty() {
            // kubectl's wording: a namespace named, or none with `-A`.
            self.push_output(Line::plain(match namespace {
                Some(ns) => format!("No resources found in {ns} namespace ({plural})."),
                None => format!("No resources found ({plural})."),
            }));
            self.flash(format!("no {plural} to list"), FlashLevel::Warn);
        } else {
            let mut lines = listing.table.render().into_lines().into_iter();
            if let Some(header) = lines.next() {
                self.push_output(header);
            }
            let first_row = self.ui.output_pushed;
            for l in lines {
                self.push_output(l);
            }
            let selected = at
                .and_then(|o| listing.objects.iter().position(|x| x == o))
                .unwrap_or(0);
            self.ui.jump = Some(Jump {
                word: word.to_string(),
                namespace: namespace.map(str::to_string),
                objects: listing.objects,
                first_row,
                selected,
                describing: false,
            });
            self.flash(
                format!("{plural}: ↑/↓ select · Enter describes · Esc back"),
                FlashLevel::Info,
            );
        }
        self.ui.mode = Mode::Normal;
        if self.ui.focus != Pane::Output {
            self.ui.focus_stack.push(self.ui.focus);
            self.ui.focus = Pane::Output;
        }
        let new = usize::try_from(self.ui.output_pushed - pushed_before).unwrap_or(usize::MAX);
        self.show_output_from(self.ui.output.len().saturating_sub(new));
        self.reveal_row();
    }

    /// Where the selected row of the listing is in the output now, if it is still kept.
    pub fn listing_row(&self) -> Option<usize> {
        let j = self.ui.jump.as_ref().filter(|j| !j.describing)?;
        let oldest = self.ui.output_pushed - self.ui.output.len() as u64;
        let at = (j.first_row + j.selected as u64).checked_sub(oldest)?;
        usize::try_from(at)
            .ok()
            .filter(|i| *i < self.ui.output.len())
    }

    /// Move the listing's selection by `d` rows (kept in view).
    fn select_row(&mut self, d: i64) {
        if let Some(j) = &mut self.ui.jump {
            let last = j.objects.len().saturating_sub(1) as i64;
            j.selected = (j.selected as i64 + d).clamp(0, last) as usize;
        }
        self.reveal_row();
    }

    /// Scroll the output so the listing's selected row is on screen.
    fn reveal_row(&mut self) {
        let Some(row) = self.listing_row() else {
            return;
        };
        let below = self.ui.output.len() - 1 - row;
        let scroll = self.ui.scroll[Pane::Output.index()];
        if below < scroll {
            self.ui.scroll[Pane::Output.index()] = below;
            return;
        }
        // Rows shown above the selected one, from the bottom of the pane.
        let area = self.viewport(Pane::Output);
        let (w, h) = (area.width.max(1) as usize, area.height.max(1) as usize);
        let end = self.ui.output.len() - scroll;
        let used: usize = (row..end)
            .map(|i| view::output::wrapped_height(&self.ui.output[i], w))
            .sum();
        if used > h {
            self.show_output_from(row);
        }
    }

    /// Enter on a selected row: the listing's object, else Topology's pod, described by a
    /// `describe` line run as if typed (in the history and the journal).
    fn open(&mut self) -> Option<Action> {
        if self.listing_active() {
            let mut j = self.ui.jump.take()?;
            let o = j.objects.get(j.selected)?.clone();
            self.run_command(&lab_engine::resource::describe_line(&o));
            j.describing = true;
            self.ui.jump = Some(j);
            self.ui.mode = Mode::Normal;
            self.flash("Esc: back to the listing".to_string(), FlashLevel::Info);
            return None;
        }
        if self.ui.focus == Pane::Topology && self.ui.sel_pod.is_some() {
            return Some(Action::RunTemplate("describe pod {pod} -n {pod_ns}"));
        }
        None
    }

    // -----------------------------------------------------------------------------------
    // Selection and scrolling.

    /// The inner area a pane has on screen now (zero-sized when hidden).
    pub fn viewport(&self, pane: Pane) -> Rect {
        view::layout(self, self.ui.area)
            .inner(pane, &self.theme)
            .unwrap_or_default()
    }

    fn pane_at(&self, x: u16, y: u16) -> Option<Pane> {
        let l = view::layout(self, self.ui.area);
        l.panes
            .iter()
            .find(|(_, r)| r.contains(ratatui::layout::Position::new(x, y)))
            .map(|(p, _)| *p)
    }

    /// Rows a node's box takes in the topology: one per pod, plus one per extra interface
    /// of a pod with Multus attachments.
    pub fn node_rows(&self, node: &str, pods: &[PodKey]) -> usize {
        3 + self.pod_rows(node, pods).max(1) + usize::from(self.theme.airy)
    }

    /// The rows the pods of one node take (a walk only for a node with multi-interface pods).
    fn pod_rows(&self, node: &str, pods: &[PodKey]) -> usize {
        pod_rows(&self.derived.pods, node, pods)
    }

    /// Which pod (its index in `pods`) and which of its rows (0: the pod's own, 1…: its
    /// extra interfaces) a pod row of a node's box shows.
    pub fn pod_at_row(&self, node: &str, pods: &[PodKey], row: usize) -> Option<(usize, usize)> {
        let ix = &self.derived.pods;
        if !ix.node_has_extra(node) {
            return (row < pods.len()).then_some((row, 0));
        }
        let mut at = 0;
        for (i, k) in pods.iter().enumerate() {
            let n = 1 + ix.extra_rows(k);
            if row < at + n {
                return Some((i, row - at));
            }
            at += n;
        }
        None
    }

    /// The selected pod's position among all pods on screen, and the row it is drawn on.
    pub fn topo_position(&self) -> Option<(usize, usize)> {
        let sel = self.ui.sel_pod.as_ref()?;
        let node = self.desk.lab.pod_node(sel)?;
        let t = &self.derived.topo;
        let g = t.names.binary_search_by(|n| n.as_str().cmp(node)).ok()?;
        let pods = self.groups().get(node)?;
        let i = pods.binary_search(sel).ok()?;
        Some((
            t.pods_before[g] + i,
            t.start(g, self.theme.airy) + 2 + self.pod_rows(node, &pods[..i]),
        ))
    }

    /// The row a node's box starts on.
    fn node_row(&self, node: &str) -> Option<usize> {
        let t = &self.derived.topo;
        let g = t.names.binary_search_by(|n| n.as_str().cmp(node)).ok()?;
        Some(t.start(g, self.theme.airy))
    }

    /// The pod at a position among all pods on screen, with its node.
    pub fn topo_pod_at(&self, index: usize) -> Option<(&String, &PodKey)> {
        let t = &self.derived.topo;
        // The last group with no more pods before it than `index`.
        let g = t
            .pods_before
            .partition_point(|&p| p <= index)
            .checked_sub(1)?;
        let (node, pods) = self.groups().get_key_value(t.names.get(g)?.as_str())?;
        pods.get(index - t.pods_before[g]).map(|k| (node, k))
    }

    /// Rows the whole topology takes.
    pub fn topo_rows(&self) -> usize {
        let t = &self.derived.topo;
        t.start(t.names.len(), self.theme.airy)
    }

    fn topo_pod_count(&self) -> usize {
        self.derived.topo.pods()
    }

    fn reveal_selection(&mut self) {
        let h = self.viewport(Pane::Topology).height as usize;
        let row = match self.topo_position() {
            Some((_, row)) => Some(row),
            None => self.ui.sel_node.as_ref().and_then(|n| self.node_row(n)),
        };
        if let Some(row) = row {
            let s = &mut self.ui.scroll[Pane::Topology.index()];
            if row < *s + 2 {
                *s = row.saturating_sub(2);
            } else if h > 0 && row >= *s + h.saturating_sub(1) {
                *s = row + 2 - h.min(row + 2);
            }
        }
    }

    fn select(&mut self, pane: Pane, d: i64) {
        match pane {
            Pane::Topology => {
                let total = self.topo_pod_count();
                if total == 0 {
                    // No pods: move between nodes.
                    let nodes: Vec<String> = self.groups().keys().cloned().collect();
                    if nodes.is_empty() {
                        return;
                    }
                    let at = self
                        .ui
                        .sel_node
                        .as_ref()
                        .and_then(|s| nodes.iter().position(|n| n == s))
                        .unwrap_or(0) as i64;
                    let i = (at + d).clamp(0, nodes.len() as i64 - 1) as usize;
                    self.ui.sel_node = Some(nodes[i].clone());
                    self.reveal_selection();
                    return;
                }
                let at = self.topo_position().map_or(-1, |(i, _)| i as i64);
                let base = if at < 0 && d > 0 { -1 } else { at.max(0) };
                let i = (base + d).clamp(0, total as i64 - 1) as usize;
                if let Some((node, key)) = self.topo_pod_at(i) {
                    let (node, key) = (node.clone(), key.clone());
                    let moved_node = self.ui.sel_node.as_deref() != Some(node.as_str());
                    self.ui.sel_node = Some(node);
                    self.ui.sel_pod = Some(key);
                    if moved_node {
                        self.derived.ipam = IpamChanges {
                            node: self.ui.sel_node.clone().unwrap_or_default(),
                            ..IpamChanges::default()
                        };
                    }
                }
                self.reveal_selection();
            }
            Pane::Calls => {
                let list: Vec<u64> = match &self.derived.calls {
                    Some(v) => v.clone(),
                    None => self.desk.lab.calls().iter().map(|(s, _)| s).collect(),
                };
                if list.is_empty() {
                    return;
                }
                let last = list.len() as i64 - 1;
                let at = match self.ui.sel_call {
                    Some(c) => list.iter().position(|s| *s == c).map_or(last, |p| p as i64),
                    None => last + 1,
                };
                let i = at + d;
                if i > last {
                    self.ui.sel_call = None;
                    return;
                }
                let i = i.clamp(0, last) as usize;
                self.ui.sel_call = Some(list[i]);
                let h = self.viewport(Pane::Calls).height.max(1) as usize;
                let s = &mut self.ui.scroll[Pane::Calls.index()];
                if i < *s {
                    *s = i;
                } else if i >= *s + h {
                    *s = i + 1 - h;
                }
            }
            Pane::Output => self.scroll_output(-d),
            p => {
                let max = view::content_len(self, p).saturating_sub(1) as i64;
                let s = &mut self.ui.scroll[p.index()];
                *s = (*s as i64 + d).clamp(0, max.max(0)) as usize;
            }
        }
    }

    /// Scroll the output: positive `d` goes up (older), negative down.
    fn scroll_output(&mut self, d: i64) {
        let max = self.ui.output.len().saturating_sub(1) as i64;
        let s = &mut self.ui.scroll[Pane::Output.index()];
        *s = (*s as i64 + d).clamp(0, max) as usize;
    }
}

/// The text of a line that continues a paragraph of prose: one prose span, not empty, not
/// a list item, table row or indented code (those keep their own lines). The Output pane
/// and the REPL join such lines into one paragraph before wrapping it to their width.
pub fn prose_continuation(line: &Line) -> Option<&str> {
    let [span] = line.spans.as_slice() else {
        return None;
    };
    let t = span.text.as_str();
    let block = t.is_empty()
        || t.starts_with(char::is_whitespace)
        || t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with('|')
        || t.starts_with("```")
        || t.split_once(". ")
            .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()));
    (span.role == Role::Prose && !block).then_some(t)
}

/// A command's echo in the output: `lab> LINE`.
fn echo(line: &str) -> Line {
    Line::new()
        .push("lab> ", Role::Actor)
        .push(line.to_string(), Role::Name)
}

/// What a `:` line lists, as k9s reads it: `:KIND` the kind in `default`, `:KIND NS` in
/// an existing namespace, `:KIND all` (or `-A`) in every namespace; `None` for a line that
/// is a command (or not a listing).
fn kind_listing<'a>(lab: &lab_engine::Lab, rest: &'a str) -> Option<(&'a str, Option<&'a str>)> {
    if names_kind(rest) {
        return Some((rest, Some("default")));
    }
    let mut words = rest.split_whitespace();
    let (word, scope) = (words.next()?, words.next()?);
    if words.next().is_some()
        || lab_engine::resource::lookup(word).is_none()
        || !matches!(
            lab_engine::command::parse(rest),
            Err(lab_engine::command::ParseError::Invalid(_))
        )
    {
        return None;
    }
    match scope {
        "all" | "-A" => Some((word, None)),
        ns if lab.cluster().namespaces.get_named("", ns).is_some() => Some((word, Some(ns))),
        _ => None,
    }
}

/// Whether what follows `:` asks for a kind's listing (k9s's `:pods`): one word that the
/// resource registry knows, or one that is no command either (the registry says what it
/// may have meant). Anything else after `:` is a command.
fn names_kind(rest: &str) -> bool {
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return false;
    }
    if lab_engine::resource::lookup(rest).is_some() {
        return true;
    }
    let command = matches!(rest, "quit" | "exit" | "q" | "q!")
        || lab_engine::command::help::is_clear_word(rest)
        || !matches!(
            lab_engine::command::parse(rest),
            Err(lab_engine::command::ParseError::Invalid(_))
        );
    !command
}

/// The first output line of an error: `✗ error: …`, or just `✗ …` when the message
/// already says it is an error (kubectl's `Error from server (NotFound): …`).
fn error_line(message: &str) -> Line {
    error_line_as(lab_engine::render::error_prefix(message), message)
}

/// [`error_line`] with the prefix the error chose (`LabError::prefix`).
fn error_line_as(prefix: &str, message: &str) -> Line {
    Line::new()
        .push("✗ ", Role::Bad)
        .push(prefix.to_string(), Role::Bad)
        .push(message.to_string(), Role::Bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> App {
        App::new(Desk::new(), Theme::standard())
    }

    /// The screen's rows as text.
    fn screen(a: &App, w: u16, h: u16) -> Vec<String> {
        let area = Rect::new(0, 0, w, h);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        ratatui::widgets::Widget::render(a, area, &mut buf);
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect())
            .collect()
    }

    #[test]
    fn topology_of_many_nodes_shows_the_selection_and_moves_through_every_pod() {
        let mut lab = lab_engine::Lab::empty();
        for i in 0..60 {
            lab.execute(&format!(
                "node add n{i:03} --cidr 10.1.{}.0/24 --ip 192.168.0.{}",
                i + 1,
                i + 1
            ))
            .expect("node add");
        }
        for (pod, node) in [("a", 5), ("b", 30), ("c", 30), ("d", 58)] {
            lab.execute(&format!("pod create {pod} --node n{node:03}"))
                .expect("pod create");
        }
        let mut a = App::new(lab, Theme::standard());
        a.update(Action::Resize(160, 48));
        a.run_command("show ipam n030");
        let rows = screen(&a, 160, 48);
        let text = rows.join("\n");
        assert!(text.contains("Topology · 60 nodes · 4 pods"), "{text}");
        assert!(text.contains("╭─ n030 "), "the selected node's box: {text}");
        assert!(
            !text.contains("╭─ n000 "),
            "scrolled to the selection: {text}"
        );
        let pod = |a: &App| a.ui.sel_pod.as_ref().map(|k| k.1.clone());
        assert_eq!(pod(&a).as_deref(), Some("b"));
        // Down through the pods in the boxes' order, across nodes, and back to the first.
        a.update(Action::Select(1));
        assert_eq!(pod(&a).as_deref(), Some("c"));
        a.update(Action::Select(1));
        assert_eq!(
            (pod(&a).as_deref(), a.ui.sel_node.as_deref()),
            (Some("d"), Some("n058"))
        );
        assert!(screen(&a, 160, 48).join("\n").contains("╭─ n058 "));
        a.update(Action::Select(-10));
        assert_eq!(
            (pod(&a).as_deref(), a.ui.sel_node.as_deref()),
            (Some("a"), Some("n005"))
        );
    }

    #[test]
    fn prompt_editing() {
        let mut p = Prompt::default();
        for c in "pod crate".chars() {
            p.edit(Edit::Insert(c));
        }
        p.edit(Edit::Left);
        p.edit(Edit::Left);
        p.edit(Edit::Left);
        p.edit(Edit::Insert('e'));
        assert_eq!(p.text, "pod create");
        p.edit(Edit::End);
        p.edit(Edit::DeleteWord);
        assert_eq!(p.text, "pod ");
        p.edit(Edit::Backspace);
        p.edit(Edit::Home);
        p.edit(Edit::Delete);
        assert_eq!(p.text, "od");
        p.edit(Edit::Clear);
        assert_eq!((p.text.as_str(), p.cursor), ("", 0));
        // Multi-byte characters keep the cursor on a boundary.
        p.edit(Edit::Insert('⇄'));
        p.edit(Edit::Left);
        p.edit(Edit::Delete);
        assert!(p.text.is_empty());
    }

    #[test]
    fn hotkeys_fill_in_the_selection() {
        let mut a = app();
        assert_eq!(a.fill("show ipam {next_node}").unwrap(), "show ipam node-2");
        assert_eq!(a.fill("show ipam {prev_node}").unwrap(), "show ipam node-2");
        assert!(a.fill("describe pod {pod}").is_err());
        a.run_command("pod create web --node node-1");
        assert_eq!(
            a.fill("describe pod {pod} -n {pod_ns}").unwrap(),
            "describe pod web -n default"
        );
        assert_eq!(a.fill("show wire {wire}").unwrap(), "show wire 0");
    }

    #[test]
    fn commands_move_the_selection() {
        let mut a = app();
        a.run_command("pod create web --node node-1");
        a.run_command("pod create db --node node-2");
        assert_eq!(a.ui.sel_pod, Some(("default".into(), "db".into())));
        assert_eq!(a.ui.sel_node.as_deref(), Some("node-2"));
        a.run_command("show ipam node-1");
        assert_eq!(a.ui.sel_node.as_deref(), Some("node-1"));
        assert_eq!(a.ui.sel_pod, Some(("default".into(), "web".into())));
        a.run_command("describe pod db");
        assert_eq!(a.ui.sel_node.as_deref(), Some("node-2"));
    }

    #[test]
    fn ipam_changes_are_tracked() {
        let mut a = app();
        a.run_command("pod create web --node node-1");
        let ip: IpAddr = "10.244.1.2".parse().unwrap();
        assert!(a.derived.ipam.added.contains(&("lab-net".to_string(), ip)));
        a.run_command("pod delete web");
        assert_eq!(a.derived.ipam.removed.len(), 1);
        assert!(a.derived.ipam.added.is_empty());
    }

    #[test]
    fn history_walks_back_and_forth() {
        let mut a = app();
        a.run_command("echo one");
        a.run_command("echo two");
        a.ui.prompt.set("draft");
        a.update(Action::History(-1));
        assert_eq!(a.ui.prompt.text, "echo two");
        a.update(Action::History(-1));
        a.update(Action::History(-1));
        assert_eq!(a.ui.prompt.text, "echo one");
        a.update(Action::History(1));
        a.update(Action::History(1));
        assert_eq!(a.ui.prompt.text, "draft");
    }

    #[test]
    fn errors_reach_the_output_and_the_flash() {
        let mut a = app();
        a.run_command("pod create x --node nowhere");
        let last = a.ui.output.back().unwrap().text();
        assert!(last.starts_with("✗ error: "), "{last}");
        assert_eq!(a.ui.flash.as_ref().unwrap().level, FlashLevel::Err);
    }

    #[test]
    fn the_wire_pane_follows_the_failure_of_the_last_command() {
        let mut a = app();
        a.run_command("node add tiny --cidr 10.9.0.0/30 --ip 192.168.0.9");
        a.run_command("pod create t1 --node tiny");
        let chain = a
            .current_call()
            .and_then(|c| model::wire_range(&a.desk.lab, c));
        assert_eq!(
            chain,
            Some((1, 5)),
            "a successful ADD shows its whole chain (#0 is the new node's NodeGetInfo)"
        );
        a.run_command("pod create t2 --node tiny");
        let c = a.current_call().unwrap();
        let e = a.desk.lab.calls().get(c).unwrap();
        assert_eq!(
            (e.exec().map(|(_, c)| c.plugin_type.as_str()), e.level()),
            (Some("bridge"), lab_engine::record::Level::Warning)
        );
    }

    #[test]
    fn views_keep_the_wire_pane_on_the_last_plugin_chain() {
        let mut a = app();
        a.run_command("pod create web --node node-1");
        a.run_command("show ipam node-2");
        a.run_command("describe pod web");
        assert_eq!(a.fill("show wire {wire}").unwrap(), "show wire 0");
        a.run_command("reset");
        assert!(a.fill("show wire {wire}").is_err());
    }

    #[test]
    fn scrollback_is_bounded_and_a_long_output_starts_at_its_echo() {
        let mut a = app();
        for i in 0..(OUTPUT_KEEP / 2 + 10) {
            a.run_command(&format!("echo {i}"));
        }
        assert_eq!(a.ui.output.len(), OUTPUT_KEEP);
        a.run_command("show wire 0");
        a.run_command("pod create web --node node-1");
        a.run_command("show wire 0");
        // The echo is the first line shown: the lines from it to the bottom of the view fit
        // the pane's rows (long lines wrap), and one more line above would not.
        let area = a.viewport(Pane::Output);
        let (w, h) = (area.width as usize, area.height as usize);
        let bottom = a.ui.output.len() - a.ui.scroll[Pane::Output.index()];
        let echo = (0..a.ui.output.len())
            .rev()
            .find(|&i| a.ui.output[i].text() == "lab> show wire 0")
            .unwrap();
        let rows = |from: usize| -> usize {
            (from..bottom)
                .map(|i| view::output::wrapped_height(&a.ui.output[i], w))
                .sum()
        };
        assert!(rows(echo) <= h, "the echo is scrolled out of view");
        assert!(rows(echo - 1) > h, "the view does not start at the echo");
    }

    #[test]
    fn quit_words_quit() {
        let mut a = app();
        a.run_command("quit");
        assert!(a.should_quit());
    }
}
