//! The dashboard, drawn into ratatui's `TestBackend` after scripted commands and keys:
//! insta snapshots of the screen at 80×24 (compact, tabbed) and 160×48 (every pane), plus
//! styled-cell asserts for what colour and weight mean (snapshots do not record style).

use crate::common::dash::{app, drive, find, key, screen_text};
use cni_csi_lab::Lab;
use cni_csi_lab::tui::{self, App, Mode, Pane, ScriptedEvents, Theme};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use lab_engine::record::What;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (160, 48);

fn after(lab: Lab, size: (u16, u16), lines: &[&str]) -> App {
    let mut a = app(lab, size);
    for l in lines {
        a.run_command(l);
    }
    a
}

fn frame(a: &mut App, size: (u16, u16)) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
    tui::draw(&mut t, a).unwrap();
    t
}

fn ch(c: char) -> Event {
    key(KeyCode::Char(c))
}

fn typed(s: &str) -> Vec<Event> {
    s.chars().map(ch).collect()
}

const PODS: &[&str] = &[
    "pod create web --node node-1 --label app=web",
    "pod create db --node node-2 --label app=db",
    "pod create api --node node-1",
];

const EXHAUST: &[&str] = &[
    "node add tiny --cidr 10.9.0.0/30 --ip 192.168.0.9",
    "pod create t1 --node tiny",
    "pod create t2 --node tiny",
];

// ---------------------------------------------------------------------------------------
// Snapshots after scripted commands.

#[test]
fn empty_cluster() {
    for size in [SMALL, LARGE] {
        let mut a = app(crate::common::empty_lab(), size);
        let t = frame(&mut a, size);
        insta::assert_snapshot!(format!("empty_{}x{}", size.0, size.1), t.backend());
    }
}

#[test]
fn default_cluster_before_any_pod() {
    let mut a = app(crate::common::lab(), LARGE);
    let t = frame(&mut a, LARGE);
    insta::assert_snapshot!("default_160x48", t.backend());
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("cni0 not created yet"), "{text}");
}

#[test]
fn pods_on_two_nodes() {
    for size in [SMALL, LARGE] {
        let mut a = after(crate::common::lab(), size, PODS);
        let t = frame(&mut a, size);
        insta::assert_snapshot!(format!("pods_{}x{}", size.0, size.1), t.backend());
    }
    let mut a = after(crate::common::lab(), LARGE, PODS);
    let t = frame(&mut a, LARGE);
    let text = screen_text(t.backend().buffer());
    // The wiring: uplink ══ bridge, then veth ⇄ eth0 per pod; IPAM and routes of node-1.
    assert!(
        text.contains("eth0 192.168.0.1/24 ══ cni0 10.244.1.1/24"),
        "{text}"
    );
    assert!(text.contains("⇄ eth0 10.244.1.3/24"), "{text}");
    assert!(text.contains("last_reserved_ip.0"), "{text}");
    assert!(text.contains("default via 10.244.1.1 dev eth0"), "{text}");
}

/// With flannel's VXLAN backend the topology names flannel.1 beside the uplink and the
/// bridge, and the Routes pane shows the onlink route through it.
#[test]
fn vxlan_shows_flannel_1_in_the_topology() {
    let mut lines = vec!["network use flannel-vxlan"];
    lines.extend(PODS);
    let mut a = after(crate::common::lab(), LARGE, &lines);
    let t = frame(&mut a, LARGE);
    let text = screen_text(t.backend().buffer());
    assert!(
        text.contains("(bridge · pods' gateway) · flannel.1 (VXLAN)"),
        "{text}"
    );
    assert!(
        text.contains("via 10.244.2.0 dev flannel.1 onlink"),
        "{text}"
    );
}

/// Calico and Cilium have no bridge: the topology names what pods reach the node through
/// (Calico's routed cali veths, Cilium's cilium_host and its tunnel).
#[test]
fn calico_and_cilium_show_their_devices_in_the_topology() {
    let mut lines = vec!["network use calico-bgp"];
    lines.extend(PODS);
    let mut a = after(crate::common::lab(), LARGE, &lines);
    let text = screen_text(frame(&mut a, LARGE).backend().buffer());
    assert!(
        text.contains("cali… (1 routed veth(s), no bridge"),
        "{text}"
    );
    assert!(text.contains("proto bird"), "{text}");
    // node-1's IPAM pane: the node's calico-ipam block (web and api hold two addresses).
    assert!(
        text.contains("calico-ipam (the cluster datastore)"),
        "{text}"
    );
    assert!(text.contains("· used 2 · free 62"), "{text}");
    let mut lines = vec!["network use cilium"];
    lines.extend(PODS);
    let mut a = after(crate::common::lab(), LARGE, &lines);
    let text = screen_text(frame(&mut a, LARGE).backend().buffer());
    assert!(
        text.contains("cilium_host 10.244.1.1/32 (router IP · pods' gateway) · cilium_vxlan"),
        "{text}"
    );
    assert!(text.contains("└─ lxc"), "{text}");
    assert!(
        text.contains("cilium-agent (IPAM kubernetes): 10.244.1.0/24 · used 3"),
        "{text}"
    );
    assert!(text.contains("router IP (cilium_host)"), "{text}");
}

/// A pod with Multus attachments: the topology lists its other interfaces, what each is
/// and the network Multus's network-status names for it.
#[test]
fn a_multus_pod_shows_every_interface_and_its_network() {
    let lines = [
        "network multus on",
        r#"nad create storage --config '{"cniVersion":"1.0.0","type":"macvlan","master":"eth0","ipam":{"type":"host-local","subnet":"10.10.0.0/24"}}'"#,
        "node add gpu-1 --cidr 10.244.4.0/24 --ip 192.168.0.4 --sriov-pf ens1f0 --vfs 2",
        r#"nad create rdma --resource intel.com/sriov_netdevice --config '{"cniVersion":"1.0.0","type":"sriov","ipam":{"type":"host-local","subnet":"10.56.0.0/24"}}'"#,
        "pod create g0 --networks storage,rdma --resource intel.com/sriov_netdevice=1",
    ];
    let wide = (120, 40);
    let mut a = after(crate::common::lab(), wide, &lines);
    let text = screen_text(frame(&mut a, wide).backend().buffer());
    // Each on a row of its own under the pod, so it fits a projector's width.
    assert!(
        text.contains("├ net1 10.10.0.2/24 macvlan on eth0 · storage"),
        "{text}"
    );
    assert!(
        text.contains("└ net2 10.56.0.2/24 VF 0000:03:02.0 of ens1f0 · rdma"),
        "{text}"
    );
    // The IPAM pane knows the attachments' ranges from the NADs (Multus's delegates).
    assert!(text.contains("/var/lib/cni/networks/rdma/"), "{text}");
    assert!(text.contains("used 1 · free 252"), "{text}");
}

/// A pod the scheduler places later (it waited for a free VF) moves under its node.
#[test]
fn a_pod_bound_later_moves_under_its_node() {
    let lines = [
        "node add gpu-1 --cidr 10.244.4.0/24 --ip 192.168.0.4 --sriov-pf ens1f0 --vfs 1",
        "pod create first --resource intel.com/sriov_netdevice=1",
        "pod create waiter --resource intel.com/sriov_netdevice=1",
    ];
    let mut a = after(crate::common::lab(), LARGE, &lines);
    let text = screen_text(frame(&mut a, LARGE).backend().buffer());
    assert!(text.contains("waiter"), "the Pending pod is shown: {text}");
    assert!(text.contains("not scheduled yet"), "{text}");
    let mut events = typed("pod delete first");
    events.push(key(KeyCode::Enter));
    let text = screen_text(drive(&mut a, LARGE, events).backend().buffer());
    let gpu = text.find("gpu-1 · podCIDR").expect("gpu-1's box");
    let node1 = text.find("node-1 · zone-1").expect("node-1's box");
    let waiter = text.find(" waiter ").expect("waiter shown");
    assert!(
        gpu < waiter && waiter < node1,
        "waiter sits in gpu-1's box: {text}"
    );
    assert!(!text.contains("not scheduled yet"), "{text}");
    assert!(text.contains("3 nodes · 1 pod "), "{text}");
}

#[test]
fn ipam_exhaustion() {
    for size in [SMALL, LARGE] {
        let mut a = after(crate::common::lab(), size, EXHAUST);
        let t = frame(&mut a, size);
        insta::assert_snapshot!(format!("exhausted_{}x{}", size.0, size.1), t.backend());
    }
    let mut a = after(crate::common::lab(), LARGE, EXHAUST);
    let t = frame(&mut a, LARGE);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("used 1 · free 0"), "{text}");
    assert!(text.contains("FULL"), "{text}");
    assert!(text.contains("! ContainerCreating"), "{text}");
    assert!(text.contains("no IP addresses available in range set: 10.9.0.1-10.9.0.2"));
}

#[test]
fn a_failing_command_shows_the_error() {
    let mut a = after(
        crate::common::lab(),
        LARGE,
        &["pod create x --node nowhere"],
    );
    let t = frame(&mut a, LARGE);
    insta::assert_snapshot!("error_160x48", t.backend());
}

#[test]
fn help_overlay_from_the_keymap() {
    for size in [SMALL, LARGE] {
        let mut a = app(crate::common::lab(), size);
        let t = drive(&mut a, size, vec![key(KeyCode::Esc), ch('?')]);
        assert_eq!(a.ui.mode, Mode::Help);
        insta::assert_snapshot!(format!("help_{}x{}", size.0, size.1), t.backend());
        // Any other key closes it.
        drive(&mut a, size, vec![ch('x')]);
        assert_eq!(a.ui.mode, Mode::Normal);
    }
}

#[test]
fn a_lesson_pane_when_a_lesson_runs() {
    let mut a = after(
        crate::common::lab(),
        LARGE,
        &["lesson start ch2-core-ideas"],
    );
    let pane = a
        .lesson
        .clone()
        .expect("the lesson pane follows the player");
    assert_eq!(pane.done, 0);
    assert!(pane.position.starts_with("step 1/"), "{}", pane.position);
    assert!(pane.text.starts_with("Step 1 · "), "{}", pane.text);
    // `h` runs the `hint` command; the pane shows the hint it printed.
    let t = drive(&mut a, LARGE, vec![key(KeyCode::Esc), ch('h')]);
    assert_eq!(a.ui.history.last().map(String::as_str), Some("hint"));
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("step 1/"), "{text}");
    assert!(a.lesson.as_ref().and_then(|l| l.hint.clone()).is_some());
    insta::assert_snapshot!("lesson_160x48", t.backend());
}

/// QA 21 §5: at a multiple-choice quiz the Lesson pane showed the question and not its
/// A/B/C options, which only the Output pane listed (and may have scrolled away). The pane
/// lists them now, at the compact and the full size alike.
#[test]
fn the_lesson_pane_lists_a_quiz_s_options() {
    for size in [SMALL, LARGE] {
        let mut lines = vec!["lesson start ch4-runtime-workflow"];
        lines.extend(std::iter::repeat_n("skip", 27));
        let mut a = after(crate::common::lab(), size, &lines);
        let pane = a.lesson.clone().expect("the lesson pane");
        assert!(pane.position.starts_with("quiz 1/"), "{}", pane.position);
        assert_eq!(pane.options.len(), 3, "{:?}", pane.options);
        a.ui.focus = Pane::Lesson;
        let t = frame(&mut a, size);
        let text = screen_text(t.backend().buffer());
        for want in [
            "which ID equals CNI_CONTAINERID?",
            "A) K8S_POD_UID",
            "B) K8S_POD_INFRA_CONTAINER_ID,",
            "C) The ID of the pod's app",
        ] {
            assert!(text.contains(want), "{size:?}: {want:?} missing:\n{text}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Keys.

#[test]
fn typing_a_command_and_enter_runs_it() {
    let mut a = app(crate::common::lab(), LARGE);
    let mut ev = typed(":pod create web --node node-1");
    ev.push(key(KeyCode::Enter));
    let t = drive(&mut a, LARGE, ev);
    assert!(
        a.desk
            .lab
            .cluster()
            .pods
            .contains_key(&("default".into(), "web".into()))
    );
    assert_eq!(a.ui.prompt.text, "", "the line is cleared after Enter");
    assert_eq!(a.ui.history, ["pod create web --node node-1"]);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("lab> pod create web --node node-1"), "{text}");
    insta::assert_snapshot!("typed_160x48", t.backend());
}

#[test]
fn a_long_pasted_line_runs_on_the_next_enter() {
    // A paste arrives as one event; it goes into the prompt in one edit (the usage hint is
    // worked out once, not once per character), so the Enter after it runs the whole line.
    let long = format!("echo {}", "x".repeat(4000));
    let mut a = app(crate::common::lab(), LARGE);
    let ev = vec![ch(':'), Event::Paste(long.clone()), key(KeyCode::Enter)];
    drive(&mut a, LARGE, ev);
    assert_eq!(a.ui.prompt.text, "", "the line ran and the prompt is empty");
    assert_eq!(a.ui.history, [long.as_str()]);
    let echoed = a.ui.output.iter().any(|l| l.text() == "x".repeat(4000));
    assert!(echoed, "the echo printed the pasted text");
    // A paste that would pass MAX_LINE is refused, saying so; the prompt keeps its text.
    let longer = format!("echo {}", "x".repeat(5000));
    let ev = vec![ch(':'), ch('e'), Event::Paste(longer)];
    drive(&mut a, LARGE, ev);
    assert_eq!(a.ui.prompt.text, "e");
    let flash =
        a.ui.flash
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
    assert!(
        flash.contains("5006 characters: longer than any command"),
        "{flash}"
    );
}

#[test]
fn tab_completes_from_the_grammar_and_the_lab() {
    let mut a = app(crate::common::lab(), SMALL);
    let mut ev = typed("po");
    ev.push(key(KeyCode::Tab));
    drive(&mut a, SMALL, ev);
    assert_eq!(a.ui.prompt.text, "po");
    assert_eq!(a.ui.candidates, ["pod", "policy"]);
    let mut ev = typed("d");
    ev.push(key(KeyCode::Tab));
    ev.extend(typed("cr"));
    ev.push(key(KeyCode::Tab));
    ev.extend(typed("web --node n"));
    ev.push(key(KeyCode::Tab));
    let t = drive(&mut a, SMALL, ev);
    assert_eq!(a.ui.prompt.text, "pod create web --node node-");
    assert_eq!(a.ui.candidates, ["node-1", "node-2"]);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("⇥ node-1  node-2"), "{text}");
}

#[test]
fn usage_hint_follows_the_typing() {
    let mut a = app(crate::common::lab(), LARGE);
    let t = drive(&mut a, LARGE, typed("pod create "));
    let text = screen_text(t.backend().buffer());
    assert!(
        text.contains("lab> pod create    pod create [OPTIONS] [--node <NODE>] <NAME>"),
        "{text}"
    );
}

#[test]
fn history_with_up_and_down() {
    let mut a = after(crate::common::lab(), SMALL, &["echo one", "echo two"]);
    drive(&mut a, SMALL, vec![key(KeyCode::Up), key(KeyCode::Up)]);
    assert_eq!(a.ui.prompt.text, "echo one");
    drive(&mut a, SMALL, vec![key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(a.ui.prompt.text, "");
}

#[test]
fn focus_moves_with_tab_shift_tab_and_alt_digits() {
    let mut a = after(crate::common::lab(), SMALL, PODS);
    // The long output of the last command took over the small screen (Output focused).
    assert_eq!(a.ui.focus, Pane::Output);
    // Start in the command line; one Esc gives the keys to the panes and goes back to the
    // pane that was focused before (QA 24 §4); Tab moves on.
    let t = drive(&mut a, SMALL, vec![key(KeyCode::Esc), key(KeyCode::Tab)]);
    assert_eq!(a.ui.mode, Mode::Normal);
    assert_eq!(a.ui.focus, Pane::Ipam);
    insta::assert_snapshot!("focus_ipam_80x24", t.backend());
    drive(
        &mut a,
        SMALL,
        vec![key(KeyCode::BackTab), key(KeyCode::BackTab)],
    );
    assert_eq!(a.ui.focus, Pane::Output, "Shift-Tab wraps around");
    let alt5 = Event::Key(KeyEvent::new(KeyCode::Char('5'), KeyModifiers::ALT));
    let t = drive(&mut a, SMALL, vec![alt5]);
    assert_eq!(a.ui.focus, Pane::Calls);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("Calls"), "{text}");
}

#[test]
fn n_selects_the_next_node_by_running_show_ipam() {
    let mut a = after(crate::common::lab(), LARGE, PODS);
    a.run_command("show ipam node-1");
    let t = drive(&mut a, LARGE, vec![key(KeyCode::Esc), ch('n')]);
    assert_eq!(a.ui.sel_node.as_deref(), Some("node-2"));
    assert_eq!(
        a.ui.history.last().map(String::as_str),
        Some("show ipam node-2")
    );
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("lab> show ipam node-2"), "{text}");
    assert!(text.contains("IPAM · node-2"), "{text}");
}

#[test]
fn d_describes_the_selected_pod() {
    let mut a = after(crate::common::lab(), SMALL, PODS);
    // Select the first pod (api on node-1) with the arrows, then describe it.
    let t = drive(
        &mut a,
        SMALL,
        vec![key(KeyCode::Esc), key(KeyCode::Home), ch('d')],
    );
    assert_eq!(
        a.ui.history.last().map(String::as_str),
        Some("describe pod api -n default")
    );
    // On a small screen the long output takes over the main area (Esc goes back).
    assert_eq!(a.ui.focus, Pane::Output);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("lab> describe pod api -n default"), "{text}");
    insta::assert_snapshot!("describe_80x24", t.backend());
    drive(&mut a, SMALL, vec![key(KeyCode::Esc)]);
    assert_eq!(a.ui.focus, Pane::Topology);
}

/// Whether the listing's row of `name` (under the echo `lab> :po`) is drawn selected.
fn row_selected(buf: &Buffer, name: &str) -> bool {
    let (x, y0) = find(buf, "lab> :po").expect("the echo on screen");
    let text = screen_text(buf);
    let y = text
        .lines()
        .enumerate()
        .skip(y0 as usize + 1)
        .find(|(_, l)| {
            l.chars()
                .skip(x as usize)
                .collect::<String>()
                .starts_with(&format!("{name} "))
        })
        .map(|(y, _)| y as u16)
        .unwrap_or_else(|| panic!("the row of {name}: {text}"));
    buf[(x, y)].modifier.contains(Modifier::REVERSED)
}

#[test]
fn colon_pods_lists_the_kind_with_a_selected_row_and_enter_describes_it() {
    for (size, name) in [((120, 40), "120x40"), (SMALL, "80x24")] {
        let mut a = after(crate::common::lab(), size, PODS);
        // k9s's resource jump: `:po` lists pods as `get pods -o wide` does, first row selected.
        let mut keys = vec![key(KeyCode::Esc), ch(':')];
        keys.extend(typed("po"));
        keys.push(key(KeyCode::Enter));
        keys.push(key(KeyCode::Down));
        let t = drive(&mut a, size, keys);
        assert_eq!(a.ui.history.last().map(String::as_str), Some(":po"));
        assert_eq!(a.ui.mode, Mode::Normal);
        assert_eq!(a.ui.focus, Pane::Output);
        let j = a.ui.jump.as_ref().expect("a listing");
        let names: Vec<&str> = j.objects.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["api", "db", "web"]);
        assert_eq!(j.selected, 1, "↓ moved to the second row");
        let text = screen_text(t.backend().buffer());
        assert!(text.contains("lab> :po"), "{text}");
        // `get pods -o wide`'s rows: the IP and NODE columns are there.
        assert!(text.contains("10.244.2.2   node-2"), "{text}");
        assert!(
            row_selected(t.backend().buffer(), "db"),
            "db is drawn selected"
        );
        assert!(!row_selected(t.backend().buffer(), "api"));
        insta::assert_snapshot!(format!("jump_pods_{name}"), t.backend());
        // Enter describes the selected row, through the command line's path.
        let t = drive(&mut a, size, vec![key(KeyCode::Enter)]);
        assert_eq!(
            a.ui.history.last().map(String::as_str),
            Some("describe pods db")
        );
        let text = screen_text(t.backend().buffer());
        assert!(text.contains("lab> describe pods db"), "{text}");
        assert!(text.contains("Esc: back to the listing"), "{text}");
        insta::assert_snapshot!(format!("jump_describe_{name}"), t.backend());
        // Esc lists the kind again with the same row selected; Esc again leaves it.
        drive(&mut a, size, vec![key(KeyCode::Esc)]);
        let j = a.ui.jump.as_ref().expect("the listing again");
        assert!(!j.describing);
        assert_eq!(j.objects[j.selected].name, "db");
        drive(&mut a, size, vec![key(KeyCode::Esc)]);
        assert!(a.ui.jump.is_none());
    }
}

#[test]
fn colon_jumps_to_every_kind_by_its_registry_names() {
    let mut a = after(crate::common::lab(), LARGE, PODS);
    for (word, one) in [("no", "node-1"), ("nodes", "node-2"), ("sc", "standard")] {
        let mut keys = vec![key(KeyCode::Esc), key(KeyCode::Esc), ch(':')];
        keys.extend(typed(word));
        keys.push(key(KeyCode::Enter));
        drive(&mut a, LARGE, keys);
        let j =
            a.ui.jump
                .as_ref()
                .unwrap_or_else(|| panic!(":{word} lists"));
        assert!(j.objects.iter().any(|o| o.name == one), ":{word}");
    }
    // An unknown kind: the registry's answer, its did-you-mean, and nothing listed.
    let mut keys = vec![key(KeyCode::Esc), key(KeyCode::Esc), ch(':')];
    keys.extend(typed("pdos"));
    keys.push(key(KeyCode::Enter));
    let t = drive(&mut a, LARGE, keys);
    assert!(a.ui.jump.is_none());
    let text = screen_text(t.backend().buffer());
    assert!(
        text.contains("the server doesn't have a resource type \"pdos\""),
        "{text}"
    );
    assert!(text.contains("did you mean pods?"), "{text}");
    // `:` and a command still runs the command.
    let mut keys = vec![key(KeyCode::Esc), ch(':')];
    keys.extend(typed("echo hi"));
    keys.push(key(KeyCode::Enter));
    drive(&mut a, LARGE, keys);
    assert_eq!(a.ui.history.last().map(String::as_str), Some("echo hi"));
    assert!(a.ui.jump.is_none());
}

#[test]
fn colon_kind_lists_a_namespace_or_all_as_k9s_does() {
    let mut a = after(crate::common::lab(), LARGE, PODS);
    a.run_command("ns create team");
    a.run_command("pod create cache -n team --node node-1");
    let list = |a: &mut tui::App, line: &str| {
        let mut keys = vec![key(KeyCode::Esc), key(KeyCode::Esc), ch(':')];
        keys.extend(typed(line));
        keys.push(key(KeyCode::Enter));
        let t = drive(a, LARGE, keys);
        screen_text(t.backend().buffer())
    };
    let names = |a: &tui::App| -> Vec<String> {
        a.ui.jump
            .as_ref()
            .map(|j| {
                j.objects
                    .iter()
                    .map(|o| format!("{}/{}", o.namespace, o.name))
                    .collect()
            })
            .unwrap_or_default()
    };
    // `:po` is the default namespace, `:po team` that one, `:po all` every namespace with
    // kubectl's NAMESPACE column.
    list(&mut a, "po");
    assert_eq!(names(&a), ["default/api", "default/db", "default/web"]);
    let text = list(&mut a, "po team");
    assert_eq!(names(&a), ["team/cache"], "{text}");
    let text = list(&mut a, "pods all");
    assert_eq!(
        names(&a),
        ["default/api", "default/db", "default/web", "team/cache"]
    );
    assert!(text.contains("NAMESPACE"), "{text}");
    // Esc from a description lists the same namespace again.
    let mut keys = vec![key(KeyCode::Down); 3];
    keys.push(key(KeyCode::Enter));
    drive(&mut a, LARGE, keys);
    assert_eq!(
        a.ui.history.last().map(String::as_str),
        Some("describe pods cache -n team")
    );
    drive(&mut a, LARGE, vec![key(KeyCode::Esc)]);
    assert_eq!(names(&a).len(), 4);
    // An empty namespace says which; a word that is no namespace is no listing, and a
    // command that starts with a kind's word still runs as the command.
    a.run_command("ns create empty");
    let text = list(&mut a, "pvc empty");
    assert!(
        text.contains("No resources found in empty namespace"),
        "{text}"
    );
    list(&mut a, "po nosuch");
    assert!(a.ui.jump.is_none());
    list(&mut a, "pod create extra --node node-2");
    assert!(a.ui.jump.is_none());
    assert!(
        a.desk
            .lab
            .cluster()
            .pods
            .get_named("default", "extra")
            .is_some()
    );
}

#[test]
fn enter_on_the_topologys_selected_pod_describes_it() {
    let mut a = after(crate::common::lab(), LARGE, PODS);
    drive(
        &mut a,
        LARGE,
        vec![key(KeyCode::Esc), key(KeyCode::Home), key(KeyCode::Enter)],
    );
    assert_eq!(
        a.ui.history.last().map(String::as_str),
        Some("describe pod api -n default")
    );
}

#[test]
fn the_ipam_pane_shows_a_lease_files_two_fields_not_its_control_characters() {
    for size in [LARGE, (120, 40), SMALL] {
        let mut a = after(crate::common::lab(), size, PODS);
        a.update(tui::Action::FocusNth(1));
        let t = frame(&mut a, size);
        let text = screen_text(t.backend().buffer());
        assert!(!text.contains("\\r\\n"), "{text}");
        let files = lab_engine::engine::node_view::ipam_files(&a.desk.lab, "node-1").unwrap();
        let web: std::net::IpAddr = "10.244.1.2".parse().unwrap();
        let lease = files.values().find_map(|f| f.leases.get(&web)).unwrap();
        assert_eq!(lease.ifname, "eth0");
        let id: String = lease.container_id.chars().take(7).collect();
        let row = text
            .lines()
            .find(|l| l.contains("10.244.1.2 ") && l.contains(&id))
            .unwrap_or_else(|| panic!("web's lease row: {text}"));
        assert!(row.contains("…  eth0"), "{row}");
    }
}

#[test]
fn w_shows_the_wire_record_of_the_selected_call() {
    let mut a = after(
        crate::common::lab(),
        LARGE,
        &["pod create web --node node-1"],
    );
    a.update(tui::Action::FocusNth(4));
    assert_eq!(a.ui.focus, Pane::Calls);
    // Up from following: the newest call, then older ones; select the bridge ADD line.
    let bridge = a
        .desk
        .lab
        .calls()
        .iter()
        .find(|(_, e)| matches!(e.what(), What::Exec { call, .. } if call.plugin_type == "bridge"))
        .map(|(s, _)| s)
        .unwrap();
    let ups = (a.desk.lab.calls().len() as u64 - bridge) as usize;
    let mut ev = vec![key(KeyCode::Esc)];
    ev.extend(std::iter::repeat_n(key(KeyCode::Up), ups));
    ev.push(ch('w'));
    let t = drive(&mut a, LARGE, ev);
    assert_eq!(a.ui.sel_call, Some(bridge));
    assert_eq!(a.ui.history.last().map(String::as_str), Some("show wire 0"));
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("wire #0  bridge on node-1"), "{text}");
    assert!(text.contains("CNI_COMMAND=ADD"), "{text}");
    insta::assert_snapshot!("wire_160x48", t.backend());
}

/// A CSI call's wire record shows as a CNI one does: request, response and status.
#[test]
fn the_wire_pane_shows_a_csi_call() {
    let mut a = after(crate::common::lab(), LARGE, &["pvc create data --size 1Gi"]);
    let create = a
        .desk
        .lab
        .calls()
        .iter()
        .find(|(_, e)| e.csi().is_some_and(|(_, c)| c.rpc == "CreateVolume"))
        .map(|(s, _)| s)
        .expect("the provisioner called CreateVolume");
    a.update(tui::Action::FocusNth(4));
    let ups = (a.desk.lab.calls().len() as u64 - create) as usize;
    let mut ev = vec![key(KeyCode::Esc)];
    ev.extend(std::iter::repeat_n(key(KeyCode::Up), ups));
    let t = drive(&mut a, LARGE, ev);
    assert_eq!(a.ui.sel_call, Some(create));
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("CreateVolume"), "{text}");
    assert!(
        text.contains("request:"),
        "the wire pane is empty for a CSI call:\n{text}"
    );
    // The request's first field (protojson prints them sorted): every node's topology.
    assert!(text.contains("\"accessibility_requirements\""), "{text}");
}

/// Select call `seq` in the Calls pane with the keys (Esc follows again; each Up goes one
/// call older), and draw.
fn select_call(a: &mut App, seq: u64) -> Terminal<TestBackend> {
    a.update(tui::Action::FocusNth(4));
    let ups = (a.desk.lab.calls().next_seq() - seq) as usize;
    let mut ev = vec![key(KeyCode::Esc)];
    ev.extend(std::iter::repeat_n(key(KeyCode::Up), ups));
    let t = drive(a, LARGE, ev);
    assert_eq!(a.ui.sel_call, Some(seq));
    assert_eq!(
        a.current_call(),
        Some(seq),
        "the wire pane shows the selected call"
    );
    t
}

/// The wire records the Wire pane shows for the current call, by the numbers of the
/// records it prints (`wire #N  …` heads the rendering of record N).
fn wire_pane_records(a: &App) -> Vec<u64> {
    tui::view::wire::lines(a, LARGE.0)
        .iter()
        .filter_map(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            let rest = text.strip_prefix("wire #")?;
            rest.split(' ').next()?.parse().ok()
        })
        .collect()
}

/// The Wire pane follows the typed links between a call and its wire records (issue 34):
/// a runtime's `CNI ADD` line shows the plugin executions that ADD ran, an `exec` line its
/// own record, the teardown `CNI DEL` after a failed ADD the DELs it ran, a CSI call its
/// RPC; checked against the records themselves (the same shared record, its command,
/// plugin and container), not against the lines' text.
#[test]
fn the_wire_pane_shows_exactly_the_records_a_call_links_to() {
    use lab_engine::cni::plugin::CniCommand;
    use lab_engine::record::{CniPurpose, WireRecord};
    use std::sync::Arc;
    let mut a = after(
        crate::common::lab(),
        LARGE,
        &[EXHAUST, &["pvc create data --size 1Gi"]].concat(),
    );
    let lab = &a.desk.lab;
    let cni_lines: Vec<(u64, CniCommand, bool, (u64, u64))> = lab
        .calls()
        .iter()
        .filter_map(|(seq, e)| {
            let op = e.cni_op()?;
            let teardown = matches!(op.purpose, CniPurpose::Teardown(_));
            Some((seq, op.command, teardown, (op.wire.first, op.wire.end)))
        })
        .collect();
    // t1's ADD, t2's failed ADD, and the DEL that tore t2's down.
    assert_eq!(cni_lines.len(), 3, "{cni_lines:?}");
    let (add_t1, add_t2, teardown) = (cni_lines[0], cni_lines[1], cni_lines[2]);
    assert_eq!(
        (add_t1.1, add_t2.1, teardown.1),
        (CniCommand::Add, CniCommand::Add, CniCommand::Del)
    );
    assert!(teardown.2 && !add_t1.2 && !add_t2.2);
    // What each range holds, read from the wire log's typed records.
    let cni = |seq: u64| match lab.wire().get(seq) {
        Some(WireRecord::Cni(c)) => Some((
            c.env.cmd(),
            c.plugin_type.clone(),
            c.env.container_id.clone(),
        )),
        _ => None,
    };
    let records =
        |(first, end): (u64, u64)| (first..end).map(cni).collect::<Option<Vec<_>>>().unwrap();
    let t1 = records(add_t1.3);
    let plugins: Vec<&str> = t1.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(plugins, ["bridge", "host-local", "portmap", "bandwidth"]);
    assert!(t1.iter().all(|r| r.0 == CniCommand::Add && r.2 == t1[0].2));
    let t2_add = records(add_t2.3);
    let t2_del = records(teardown.3);
    assert_eq!(
        add_t2.3.1, teardown.3.0,
        "the teardown's DELs follow the failed ADD's records"
    );
    assert!(
        t2_add
            .iter()
            .all(|r| r.0 == CniCommand::Add && r.2 != t1[0].2)
    );
    assert!(!t2_del.is_empty());
    assert!(
        t2_del
            .iter()
            .all(|r| r.0 == CniCommand::Del && r.2 == t2_add[0].2)
    );
    // One exec line (t1's host-local): its link is the very record the wire log keeps.
    let (exec, exec_wire) = lab
        .calls()
        .iter()
        .find_map(|(seq, e)| match e.what() {
            What::Exec { wire, call } if call.plugin_type == "host-local" => {
                let shared =
                    matches!(lab.wire().get(*wire), Some(WireRecord::Cni(w)) if Arc::ptr_eq(w, call));
                assert!(shared, "the exec line shares its wire record");
                Some((seq, *wire))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(exec_wire, add_t1.3.0 + 1);
    // The CSI call: CreateVolume, the same shared record.
    let (csi, csi_wire) = lab
        .calls()
        .iter()
        .find_map(|(seq, e)| {
            let (wire, call) = e.csi()?;
            let shared = matches!(lab.wire().get(wire), Some(WireRecord::Csi(w)) if std::ptr::eq(w.as_ref(), call));
            (call.rpc == "CreateVolume" && shared).then_some((seq, wire))
        })
        .expect("the provisioner's CreateVolume, linked to its record");
    let range = |(first, end): (u64, u64)| (first..end).collect::<Vec<u64>>();
    for (call, want) in [
        (add_t1.0, range(add_t1.3)),
        (exec, vec![exec_wire]),
        (add_t2.0, range(add_t2.3)),
        (teardown.0, range(teardown.3)),
        (csi, vec![csi_wire]),
    ] {
        select_call(&mut a, call);
        assert_eq!(wire_pane_records(&a), want, "call #{call}");
    }
}

#[test]
fn hotkeys_without_a_selection_explain_themselves() {
    let mut a = app(crate::common::lab(), SMALL);
    drive(&mut a, SMALL, vec![key(KeyCode::Esc), ch('d')]);
    let f = a.ui.flash.clone().unwrap();
    assert!(f.text.starts_with("select a pod first"), "{}", f.text);
    assert!(a.ui.history.is_empty(), "nothing ran");
}

#[test]
fn scrolling_with_page_keys_and_the_mouse_wheel() {
    let mut a = after(
        crate::common::lab(),
        SMALL,
        &["pod create web --node node-1", "show wire 0"],
    );
    // Keys to the panes: the Esc that does it also brings the panes back from the long
    // output, so the Output is focused again (Alt-7) to scroll it.
    a.update(tui::Action::Back);
    a.update(tui::Action::FocusNth(6));
    assert_eq!(a.ui.focus, Pane::Output);
    let before = a.ui.scroll[Pane::Output.index()];
    drive(&mut a, SMALL, vec![key(KeyCode::PageUp)]);
    assert!(
        a.ui.scroll[Pane::Output.index()] > before,
        "PgUp scrolls back"
    );
    drive(&mut a, SMALL, vec![key(KeyCode::End)]);
    assert_eq!(
        a.ui.scroll[Pane::Output.index()],
        0,
        "End returns to the newest"
    );
    // Wheel over the wire pane at 160×48 scrolls it.
    let mut b = after(
        crate::common::lab(),
        LARGE,
        &["pod create web --node node-1"],
    );
    let t = frame(&mut b, LARGE);
    let (x, y) = find(t.backend().buffer(), "Wire").unwrap();
    let wheel = Event::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: x,
        row: y + 3,
        modifiers: KeyModifiers::NONE,
    });
    drive(&mut b, LARGE, vec![wheel]);
    assert_eq!(b.ui.scroll[Pane::Wire.index()], 3);
}

#[test]
fn filter_narrows_pods_and_calls() {
    let mut a = after(crate::common::lab(), LARGE, PODS);
    let mut ev = vec![key(KeyCode::Esc), ch('/')];
    ev.extend(typed("db"));
    ev.push(key(KeyCode::Enter));
    let t = drive(&mut a, LARGE, ev);
    assert_eq!(a.ui.mode, Mode::Normal);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("1 node · 1 pod · /db"), "{text}");
    drive(&mut a, LARGE, vec![key(KeyCode::Esc)]);
    assert!(a.ui.filter.text.is_empty(), "Esc clears the filter");
}

#[test]
fn quit_and_ctrl_c_end_the_loop() {
    let mut a = app(crate::common::lab(), SMALL);
    let mut ev = typed("quit");
    ev.push(key(KeyCode::Enter));
    ev.push(ch('x')); // never read
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut src = ScriptedEvents(ev.into());
    tui::run_loop(&mut t, &mut a, &mut src).unwrap();
    assert!(a.should_quit());
    assert_eq!(src.0.len(), 1);
    let mut b = app(crate::common::lab(), SMALL);
    let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    let mut src = ScriptedEvents(vec![ctrl_c, ch('x')].into());
    tui::run_loop(&mut t, &mut b, &mut src).unwrap();
    assert!(b.should_quit());
}

/// Among the keys (after Esc), a letter that is no hotkey starts a command with it; `q`
/// offers `quit`; Ctrl-D quits on an empty line and deletes on a full one.
#[test]
fn typing_among_the_keys_reaches_the_prompt_and_ctrl_d_or_q_quit() {
    let mut a = app(crate::common::lab(), SMALL);
    let mut ev = vec![key(KeyCode::Esc)];
    ev.extend(typed("pod list"));
    ev.push(key(KeyCode::Enter));
    let t = drive(&mut a, SMALL, ev);
    assert_eq!(a.ui.history.last().map(String::as_str), Some("pod list"));
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("lab> pod list"), "{text}");

    // The keys mode says what it is and how to leave it.
    let mut b = app(crate::common::lab(), SMALL);
    let t = drive(&mut b, SMALL, vec![key(KeyCode::Esc)]);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("keys mode:"), "{text}");
    assert!(text.contains("KEYS"), "{text}");

    let ctrl_d = || Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL));
    // Ctrl-D on a line with text deletes under the cursor, and does not quit.
    let mut c = app(crate::common::lab(), SMALL);
    let mut ev = typed("node");
    ev.push(key(KeyCode::Home));
    ev.push(ctrl_d());
    drive(&mut c, SMALL, ev);
    assert_eq!(c.ui.prompt.text, "ode");
    // On an empty line it quits, as in a shell.
    let mut d = app(crate::common::lab(), SMALL);
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let mut src = ScriptedEvents(vec![ctrl_d(), ch('x')].into());
    tui::run_loop(&mut t, &mut d, &mut src).unwrap();
    assert!(d.should_quit());

    // `q` among the keys puts `quit` on the line: Esc stays, Enter quits.
    let mut e = app(crate::common::lab(), SMALL);
    drive(&mut e, SMALL, vec![key(KeyCode::Esc), ch('q')]);
    assert_eq!(e.ui.prompt.text, "quit");
    let mut src = ScriptedEvents(vec![key(KeyCode::Enter), ch('x')].into());
    e.ui.quit = false;
    tui::run_loop(&mut t, &mut e, &mut src).unwrap();
    assert!(e.should_quit());
}

/// `clear` and Ctrl-L empty the Output pane (and run nothing in the lab).
#[test]
fn clear_and_ctrl_l_empty_the_output() {
    let mut a = after(crate::common::lab(), SMALL, &["node list", "clear"]);
    assert!(a.ui.output.is_empty(), "{:?}", a.ui.output);
    a.run_command("node list");
    assert!(!a.ui.output.is_empty());
    let ctrl_l = Event::Key(KeyEvent::new(KeyCode::Char('l'), KeyModifiers::CONTROL));
    drive(&mut a, SMALL, vec![ctrl_l]);
    assert!(a.ui.output.is_empty(), "{:?}", a.ui.output);
}

#[test]
fn the_screen_reflows_on_resize() {
    let mut a = after(crate::common::lab(), LARGE, PODS);
    let t = drive(&mut a, SMALL, vec![Event::Resize(80, 24)]);
    let text = screen_text(t.backend().buffer());
    assert!(
        text.contains(" 1 Topology  2 IPAM "),
        "compact layout has tabs: {text}"
    );
}

// ---------------------------------------------------------------------------------------
// What colour and weight mean (insta does not record styles).

#[test]
fn styles_carry_meaning() {
    let th = Theme::standard();
    let mut a = after(crate::common::lab(), LARGE, EXHAUST);
    a.run_command("pod create x --node nowhere");
    let t = frame(&mut a, LARGE);
    let buf = t.backend().buffer();
    // The error line is in the error style (vermillion, bold) and starts with ✗.
    let (x, y) = find(buf, "✗ error:").unwrap();
    assert_eq!(buf[(x, y)].fg, th.bad.fg.unwrap());
    assert!(buf[(x, y)].modifier.contains(Modifier::BOLD));
    // The IPAM lease the last successful ADD wrote is marked and highlighted.
    a.run_command("pod create t3 --node node-1");
    let t = frame(&mut a, LARGE);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "● 10.244.1.2").unwrap();
    assert_eq!(buf[(x + 2, y)].bg, th.changed.bg.unwrap());
    assert!(buf[(x + 2, y)].modifier.contains(Modifier::BOLD));
    // A Running pod is in the success colour, a waiting one in the warning colour with `!`.
    let (x, y) = find(buf, "Running").unwrap();
    assert_eq!(buf[(x, y)].fg, th.good.fg.unwrap());
    a.run_command("show ipam tiny");
    let t = frame(&mut a, LARGE);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "! ContainerCreating").unwrap();
    assert_eq!(buf[(x, y)].fg, th.warn.fg.unwrap());
    // The focused pane's border is yellow and thick; the others grey.
    let (x, y) = find(buf, "┏").unwrap();
    assert_eq!(buf[(x, y)].fg, th.border_focused.fg.unwrap());
    let (x, y) = find(buf, "┌").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::DarkGray);
}

#[test]
fn no_color_is_monochrome_with_emphasis_by_weight() {
    let mut a = App::new(crate::common::lab(), Theme::pick(false, true));
    a.update(tui::Action::Resize(LARGE.0, LARGE.1));
    for l in EXHAUST {
        a.run_command(l);
    }
    a.run_command("bogus");
    let t = frame(&mut a, LARGE);
    let buf = t.backend().buffer();
    for cell in buf.content() {
        assert_eq!(cell.fg, Color::Reset, "no foreground colour under NO_COLOR");
        assert_eq!(cell.bg, Color::Reset, "no background colour under NO_COLOR");
    }
    let (x, y) = find(buf, "✗ error:").unwrap();
    assert!(buf[(x, y)].modifier.contains(Modifier::BOLD));
}

#[test]
fn big_theme_is_high_contrast_with_heavier_borders() {
    let mut a = App::new(crate::common::lab(), Theme::pick(true, false));
    a.update(tui::Action::Resize(LARGE.0, LARGE.1));
    for l in PODS {
        a.run_command(l);
    }
    let t = frame(&mut a, LARGE);
    insta::assert_snapshot!("big_160x48", t.backend());
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "┗").or_else(|| find(buf, "╚")).unwrap();
    assert_eq!(buf[(x, y)].bg, Color::Black);
    assert!(find(buf, "┌").is_none(), "no thin borders in the big theme");
}

/// The captures the book's dashboard tour shows are real frames: rendered here and compared
/// with the checked-in text (`BLESS=1` rewrites them).
#[test]
fn book_dashboard_captures_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/captures");
    let shots: [(&str, (u16, u16), &[&str]); 2] = [
        (
            "dashboard-160x48.txt",
            LARGE,
            &[
                "pod create web --node node-1 --label app=web",
                "pvc create data --size 1Gi",
                "pod create db --node node-2 --label app=db --pvc data",
            ],
        ),
        (
            "dashboard-80x24.txt",
            SMALL,
            &["pod create web --node node-1 --label app=web"],
        ),
    ];
    let bless = std::env::var_os("BLESS").is_some();
    for (file, size, lines) in shots {
        let mut a = after(crate::common::lab(), size, lines);
        let t = frame(&mut a, size);
        let text: String = screen_text(t.backend().buffer())
            .lines()
            .map(|l| format!("{}\n", l.trim_end()))
            .collect();
        let path = dir.join(file);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            have,
            text,
            "{} is stale; run `BLESS=1 cargo test --test it tui::book_dashboard`",
            path.display()
        );
    }
}

/// Issue 19: the dashboard on a real terminal (a pty from util-linux `script`) ended by
/// SIGTERM, SIGHUP or SIGINT exits 128 + the signal, as the other front ends do (it exited 0).
/// Skipped where `script` or `/proc` is missing.
#[test]
fn the_dashboard_ends_with_128_plus_n_on_signals() {
    use std::process::{Command, Stdio};
    let has_script = Command::new("script")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_script || !std::path::Path::new("/proc/self/task").exists() {
        eprintln!("skipped: no util-linux script or /proc");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_cni-csi-lab");
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        // `script` gives the dashboard a pty; its stdin stays open (piped) meanwhile. `exec`
        // makes the dashboard `script`'s own child whatever shell `script` starts (dash, the
        // usual /bin/sh, forks for `-c CMD`; a signal to the shell would orphan the dashboard).
        let mut script = Command::new("script")
            .args(["-qefc", &format!("exec {bin} dash"), "/dev/null"])
            .env("TERM", "xterm")
            .env("SHELL", "/bin/sh")
            .env("CNI_CSI_LAB_HISTORY", "")
            .env("CNI_CSI_LAB_PROGRESS", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("script runs");
        // The dashboard is `script`'s child; wait until it runs the lab and has drawn a while.
        let children = format!("/proc/{0}/task/{0}/children", script.id());
        let start = std::time::Instant::now();
        let child = loop {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            let lab = text.split_whitespace().find(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|exe| exe == std::path::Path::new(bin))
            });
            if let Some(pid) = lab {
                break pid.to_string();
            }
            if start.elapsed().as_secs() >= 20 {
                let _ = script.kill();
                let _ = script.wait();
                panic!("the dashboard did not start under script within 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let st = Command::new("kill")
            .args([&format!("-{signal}"), &child])
            .status()
            .expect("kill runs");
        assert!(st.success());
        // Never hang the suite: a dashboard that ignores the signal fails the test.
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = script.try_wait().unwrap() {
                break status;
            }
            if start.elapsed().as_secs() >= 20 {
                let _ = Command::new("kill").args(["-KILL", &child]).status();
                let _ = script.kill();
                let _ = script.wait();
                panic!("the dashboard was still running 20 s after SIG{signal}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(status.code(), Some(code), "dashboard on SIG{signal}");
    }
}

/// `play FILE --step` in the dashboard: the caption shown, then the cue to go on (the
/// teacher talks over it); Enter types the command into the prompt and runs it, and the
/// next caption waits the same way; Esc stops.
#[test]
fn a_teacher_plays_a_script_step_by_step() {
    let dir = std::env::temp_dir().join(format!("lab-tui-play-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("class.lab");
    std::fs::write(
        &f,
        "# First pod.\npod create a --node node-1\n# Second pod.\npod create b --node node-1\npod create c --node node-1\n",
    )
    .unwrap();
    let mut a = app(crate::common::lab(), LARGE);
    a.run_command(&format!("play {} --step", f.display()));
    let output = |a: &App| {
        a.ui.output
            .iter()
            .map(|l| l.text())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let ticks = |a: &mut App| {
        for _ in 0..40 {
            a.update(tui::Action::Tick);
        }
    };
    ticks(&mut a);
    // The first caption is up and nothing has run: the teacher speaks first.
    assert_eq!(a.desk.lab.cluster().pods.len(), 0, "{}", output(&a));
    let text = output(&a);
    assert!(text.contains("First pod."), "{text}");
    assert!(text.ends_with("  [Enter: next · Esc: stop]"), "{text}");
    let screen = screen_text(frame(&mut a, LARGE).backend().buffer());
    // The cue at the prompt, and the caption kept in view beside the output.
    assert!(
        screen.contains("lab>    ▶ Enter: next · Esc: stop"),
        "{screen}"
    );
    let lesson = a
        .lesson
        .as_ref()
        .expect("the caption is in the lesson pane");
    assert_eq!(lesson.text, "First pod.");
    assert!(screen.contains("First pod."), "{screen}");
    // Ticks alone do not go on.
    ticks(&mut a);
    assert_eq!(a.desk.lab.cluster().pods.len(), 0);
    a.update(tui::Action::Submit);
    ticks(&mut a);
    assert_eq!(a.desk.lab.cluster().pods.len(), 1);
    // The next caption is shown before its command runs.
    let text = output(&a);
    assert!(text.contains("Second pod."), "{text}");
    assert!(text.ends_with("  [Enter: next · Esc: stop]"), "{text}");
    a.update(tui::Action::Submit);
    ticks(&mut a);
    assert_eq!(a.desk.lab.cluster().pods.len(), 2);
    a.update(tui::Action::Back);
    ticks(&mut a);
    assert_eq!(
        a.desk.lab.cluster().pods.len(),
        2,
        "Esc stopped the playback"
    );
    assert!(output(&a).contains("── playback stopped"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A played command that fails (or a `!` one that succeeds) stops the playback: the lines
/// after it were written for the state it should have left.
#[test]
fn playback_stops_at_a_command_that_does_not_do_what_the_script_says() {
    let dir = std::env::temp_dir().join(format!("lab-tui-playfail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("class.lab");
    std::fs::write(
        &f,
        "pod create a --node node-1\n! pod create a --node node-1\npod create a --node node-9\npod create b --node node-1\n",
    )
    .unwrap();
    let mut a = app(crate::common::lab(), LARGE);
    a.run_command(&format!("play {} --pace 0s", f.display()));
    for _ in 0..400 {
        a.update(tui::Action::Tick);
    }
    let text: Vec<String> = a.ui.output.iter().map(|l| l.text()).collect();
    let text = text.join("\n");
    assert!(a.playback.is_none(), "{text}");
    assert!(
        text.contains("── playback stopped: \"pod create a --node node-9\" failed"),
        "{text}"
    );
    assert!(!text.contains("playback finished"), "{text}");
    assert_eq!(a.desk.lab.cluster().pods.len(), 1, "b was never created");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// Classroom sizes (issue 36): the state panes together on a projector, no key row cut.

/// The sizes a class meets: a laptop's terminal, the book's projector size, a larger
/// projector, a wide monitor.
const CLASS_SIZES: [(u16, u16); 4] = [(80, 24), (100, 30), (120, 40), (200, 60)];

/// Pods on both nodes and a claim mounted into one of them (every pane has rows).
const CLASS: &[&str] = &[
    "pod create web --node node-1 --label app=web",
    "pod create api --node node-1",
    "pvc create data --size 1Gi",
    "pod create db --node node-2 --label app=db --pvc data",
    "show ipam node-2",
];

/// Every address, prefix, range and state the engine's view models hold for the panes of
/// the grid, and the address part of each `ADDR/LEN`: what the dashboard must never show
/// cut.
fn key_tokens(a: &App) -> std::collections::BTreeSet<String> {
    use lab_engine::dash;
    let lab = &a.desk.lab;
    let mut out = std::collections::BTreeSet::new();
    let mut add = |s: &str| {
        if s.contains('.') && !s.contains(' ') {
            out.insert(s.to_string());
        }
        for part in s.split([' ', '-']) {
            let part = part.trim_matches(|c: char| c == ',' || c == '(' || c == ')');
            let word =
                part.contains('.') || part.chars().all(|c| c.is_ascii_alphabetic() || c == '_');
            if word && part.len() >= 4 {
                out.insert(part.to_string());
                if let Some((addr, _)) = part.split_once('/') {
                    out.insert(addr.to_string());
                }
            }
        }
    };
    for state in tui::VolumeState::ALL {
        add(state.label());
    }
    let nodes: Vec<String> = lab.node_names().map(str::to_string).collect();
    for n in &nodes {
        let f = dash::node_facts(lab, n).unwrap();
        add(&f.pod_cidr);
        add(&f.internal_ip);
        add(&f.uplink.1);
        if let Some((_, addr)) = &f.bridge {
            add(addr);
        }
        for s in dash::ipam_summaries(lab, n) {
            for r in &s.ranges {
                add(r);
            }
            add(&s.gateway);
        }
        let tables = lab.node_routes(n).unwrap();
        for f in tables.v4.iter().chain(&tables.v6) {
            for w in f.line.split_whitespace().filter(|w| w.contains('.')) {
                add(w);
            }
        }
    }
    for key in lab.cluster().pods.keys() {
        let p = dash::pod_facts(lab, key).unwrap();
        add(&p.ip);
        add(&p.status);
        let tables = dash::pod_routes(lab, &p);
        for f in tables.v4.iter().chain(&tables.v6) {
            for w in f.line.split_whitespace().filter(|w| w.contains('.')) {
                add(w);
            }
        }
    }
    out
}

/// Words shown in the grid's panes (Topology, IPAM, Routes, Volumes) that are the start of
/// a key token but not a token themselves: a row cut in an address, prefix or state.
fn cut_tokens(a: &App, buf: &Buffer) -> Vec<String> {
    let tokens = key_tokens(a);
    let screen = tui::view::layout(a, buf.area);
    let mut cut = Vec::new();
    for pane in [Pane::Topology, Pane::Ipam, Pane::Routes, Pane::Volumes] {
        let Some(r) = screen.rect(pane) else {
            continue;
        };
        for y in r.y..r.y + r.height {
            let row: String = (r.x..r.x + r.width).map(|x| buf[(x, y)].symbol()).collect();
            for w in row.split(|c: char| !(c.is_ascii_alphanumeric() || "./_-".contains(c))) {
                if w.len() >= 4 && !tokens.contains(w) && tokens.iter().any(|t| t.starts_with(w)) {
                    cut.push(format!("{pane:?}: {w:?} in {row:?}"));
                }
            }
        }
    }
    cut
}

/// Which of the grid's panes are on screen.
fn grid_panes(a: &App, area: ratatui::layout::Rect) -> Vec<Pane> {
    let screen = tui::view::layout(a, area);
    [Pane::Topology, Pane::Ipam, Pane::Routes, Pane::Volumes]
        .into_iter()
        .filter(|p| screen.rect(*p).is_some())
        .collect()
}

/// At the four classroom sizes, the state panes share the screen (all four from 100×30,
/// two at 80×24), and the snapshots show what a class sees.
#[test]
fn classroom_sizes_show_the_state_panes_together() {
    for size in CLASS_SIZES {
        let mut a = after(crate::common::lab(), size, CLASS);
        // The last command's output stays in the strip; the grid stays in view.
        a.update(tui::Action::FocusNth(0));
        let t = frame(&mut a, size);
        let area = t.backend().buffer().area;
        let shown = grid_panes(&a, area);
        let want = if size.0 >= 100 { 4 } else { 2 };
        assert!(shown.len() >= want, "{size:?}: {shown:?}");
        let text = screen_text(t.backend().buffer());
        for pane in &shown {
            assert!(text.contains(pane.title()), "{size:?} {pane:?}: {text}");
        }
        insta::assert_snapshot!(format!("class_{}x{}", size.0, size.1), t.backend());
    }
    // At 100×30: node-1's wiring, node-2's lease, its routes and the volume's paths.
    let mut a = after(crate::common::lab(), (100, 30), CLASS);
    a.update(tui::Action::FocusNth(0));
    let text = screen_text(frame(&mut a, (100, 30)).backend().buffer());
    for want in [
        "podCIDR 10.244.1.0/24",
        "eth0 192.168.0.1/24 ══ cni0 10.244.1.1/24",
        "10.244.1.2/24",
        "range 10.244.2.1-10.244.2.254",
        "gateway 10.244.2.1",
        "10.244.1.0/24 via 192.168.0.1 dev eth0",
        "staging …/",
        "/globalmount",
        "publish …/",
        "…/pvc-",
        "/mount",
        "◉ PUBLISHED",
    ] {
        assert!(text.contains(want), "{want:?} missing at 100×30:\n{text}");
    }
}

/// No key row is cut: at every size from 80×24 up, with each pane of the grid in focus,
/// no address, prefix, range or state the engine's view models hold shows cut short in
/// the Topology, IPAM, Routes or Volumes pane (what does not fit wraps, or a label goes).
#[test]
fn no_key_row_is_cut_at_any_size() {
    let sizes = [
        (80, 24),
        (90, 28),
        (100, 30),
        (110, 33),
        (120, 40),
        (160, 48),
        (200, 60),
    ];
    let scenarios: [&[&str]; 3] = [
        CLASS,
        EXHAUST,
        &["network use calico-bgp", PODS[0], PODS[1]],
    ];
    for lines in scenarios {
        for size in sizes {
            let mut a = after(crate::common::lab(), size, lines);
            for focus in [0, 1, 2, 3] {
                a.update(tui::Action::FocusNth(focus));
                let t = frame(&mut a, size);
                let cut = cut_tokens(&a, t.backend().buffer());
                assert!(
                    cut.is_empty(),
                    "{size:?}, focus {focus}, after {lines:?}: {cut:#?}\n{}",
                    screen_text(t.backend().buffer())
                );
            }
        }
    }
}

/// The check above notices a cut: a route drawn into a pane too narrow for it.
#[test]
fn the_cut_check_notices_a_cut_address() {
    let size = (100, 30);
    let mut a = after(crate::common::lab(), size, CLASS);
    a.update(tui::Action::FocusNth(0));
    let mut t = frame(&mut a, size);
    let r = tui::view::layout(&a, ratatui::layout::Rect::new(0, 0, size.0, size.1))
        .inner(Pane::Routes, &a.theme)
        .unwrap();
    t.backend_mut();
    let mut buf = t.backend().buffer().clone();
    let line = format!(
        "{}10.244.1.0/24 via 192.168.0.1",
        " ".repeat(r.width as usize - 8)
    );
    buf.set_string(
        r.x,
        r.y + 1,
        &line[..r.width as usize],
        ratatui::style::Style::new(),
    );
    assert!(!cut_tokens(&a, &buf).is_empty());
}

// ---------------------------------------------------------------------------------------
// Themes (issue 36): light and high contrast, `--big` composing with them and NO_COLOR.

fn themed(theme: Theme, size: (u16, u16)) -> (App, Terminal<TestBackend>) {
    let mut a = App::new(crate::common::lab(), theme);
    a.update(tui::Action::Resize(size.0, size.1));
    for l in CLASS {
        a.run_command(l);
    }
    a.update(tui::Action::FocusNth(0));
    let t = frame(&mut a, size);
    (a, t)
}

/// `--big` under NO_COLOR, with any palette: no colour and no dim text anywhere (a washed
/// out projector loses dim text), the big borders kept, emphasis by weight.
#[test]
fn big_under_no_color_has_no_colour_and_no_dim_text() {
    use tui::Palette;
    for palette in [
        None,
        Some(Palette::Dark),
        Some(Palette::Light),
        Some(Palette::HighContrast),
    ] {
        let (_, t) = themed(Theme::build(palette, true, true), (100, 30));
        let buf = t.backend().buffer();
        for cell in buf.content() {
            assert_eq!(
                (cell.fg, cell.bg),
                (Color::Reset, Color::Reset),
                "{palette:?} {cell:?}"
            );
            assert!(
                !cell.modifier.contains(Modifier::DIM),
                "{palette:?}: dim {cell:?}"
            );
        }
        assert!(
            find(buf, "┏").is_some() || find(buf, "╔").is_some(),
            "thick borders"
        );
        let (x, y) = find(buf, "Running").unwrap();
        assert!(buf[(x, y)].modifier.is_empty() || buf[(x, y)].modifier.contains(Modifier::BOLD));
    }
}

/// Labels are never dark grey (ANSI 8, which a projector loses) on the normal theme: only
/// the borders of panes without the focus are.
#[test]
fn dark_grey_is_only_for_borders() {
    for size in [(100, 30), LARGE] {
        let (_, t) = themed(Theme::standard(), size);
        let buf = t.backend().buffer();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                let cell = &buf[(x, y)];
                if cell.fg != Color::DarkGray {
                    continue;
                }
                let c = cell.symbol().chars().next().unwrap_or(' ');
                assert!(
                    c == ' ' || ('\u{2500}'..='\u{257f}').contains(&c),
                    "{c:?} at ({x}, {y}) in dark grey:\n{}",
                    screen_text(buf)
                );
            }
        }
    }
}

/// The light theme paints every cell on white (not the terminal's dark background), the
/// high-contrast one on black; `--big` keeps either palette and adds its borders.
#[test]
fn light_and_high_contrast_themes() {
    use tui::Palette;
    for (palette, bg) in [
        (Palette::Light, Color::White),
        (Palette::HighContrast, Color::Black),
    ] {
        for big in [false, true] {
            let (_, t) = themed(Theme::build(Some(palette), big, false), (100, 30));
            let buf = t.backend().buffer();
            assert!(
                buf.content().iter().all(|c| c.bg != Color::Reset),
                "{palette:?}"
            );
            let (x, y) = find(buf, "podCIDR").unwrap();
            assert_eq!(buf[(x, y)].bg, bg, "{palette:?}");
            assert_eq!(find(buf, "╔").is_some(), big, "{palette:?} big={big}");
        }
    }
}

/// A frame as HTML: each run of cells with one style a `<span>` in its colours and weight
/// (the terminal's own colours for `Reset`: a dark background).
fn frame_html(buf: &Buffer) -> String {
    fn css(c: Color, default: &str) -> String {
        match c {
            Color::Reset => default.to_string(),
            Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
            Color::Black => "#000000".into(),
            Color::White => "#ffffff".into(),
            Color::Gray => "#c0c0c0".into(),
            Color::DarkGray => "#808080".into(),
            Color::Yellow => "#e0e000".into(),
            other => format!("{other}").to_lowercase(),
        }
    }
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let (fg0, bg0) = ("#d0d0d0", "#1c1c1c");
    let mut out = format!(
        "<pre style=\"background:{bg0};color:{fg0};font-size:11px;line-height:1.25;padding:6px;overflow-x:auto\">"
    );
    for y in 0..buf.area.height {
        let mut x = 0;
        while x < buf.area.width {
            let first = &buf[(x, y)];
            let key = (first.fg, first.bg, first.modifier);
            let mut text = String::new();
            while x < buf.area.width
                && (buf[(x, y)].fg, buf[(x, y)].bg, buf[(x, y)].modifier) == key
            {
                text.push_str(buf[(x, y)].symbol());
                x += 1;
            }
            let (mut fg, mut bg) = (css(key.0, fg0), css(key.1, bg0));
            if key.2.contains(Modifier::REVERSED) {
                std::mem::swap(&mut fg, &mut bg);
            }
            let mut style = format!("color:{fg};background:{bg}");
            if key.2.contains(Modifier::BOLD) {
                style.push_str(";font-weight:bold");
            }
            if key.2.contains(Modifier::UNDERLINED) {
                style.push_str(";text-decoration:underline");
            }
            if key.2.contains(Modifier::DIM) {
                style.push_str(";opacity:0.6");
            }
            out.push_str(&format!("<span style=\"{style}\">{}</span>", esc(&text)));
        }
        out.push('\n');
    }
    out.push_str("</pre>\n");
    out
}

/// The book's screenshots of each theme are real frames (100×30, the projector size),
/// rendered as HTML with their colours; `BLESS=1` rewrites them.
#[test]
fn book_theme_captures_are_current() {
    use tui::Palette;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/captures");
    let shots = [
        (
            "theme-dark-100x30.html",
            Theme::build(Some(Palette::Dark), false, false),
        ),
        (
            "theme-light-100x30.html",
            Theme::build(Some(Palette::Light), false, false),
        ),
        (
            "theme-high-contrast-100x30.html",
            Theme::build(Some(Palette::HighContrast), false, false),
        ),
        (
            "theme-big-no-color-100x30.html",
            Theme::build(None, true, true),
        ),
    ];
    let bless = std::env::var_os("BLESS").is_some();
    for (file, theme) in shots {
        let (_, t) = themed(theme, (100, 30));
        let html = frame_html(t.backend().buffer());
        let path = dir.join(file);
        if bless {
            std::fs::write(&path, &html).unwrap();
            continue;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == html,
            "{} is stale; run `BLESS=1 cargo test --test it tui::book_theme`",
            path.display()
        );
    }
}

/// `lesson play` in the dashboard keeps the step's heading and text in the lesson pane while
/// the Output shows its commands, at the projector size too; the prompt shows the cue, not
/// a stale hint; Esc stops it and the pane goes.
#[test]
fn lesson_play_keeps_the_step_in_view() {
    for size in [(100, 30), LARGE] {
        let mut a = app(crate::common::lab(), size);
        let mut ev = typed("lesson play ch2-core-ideas --speed 50");
        ev.push(key(KeyCode::Enter));
        drive(&mut a, size, ev);
        for _ in 0..60 {
            a.update(tui::Action::Tick);
        }
        let view = a
            .lesson
            .clone()
            .expect("the playback's step is in the lesson pane");
        assert!(view.title.starts_with("lesson play: "), "{view:?}");
        assert!(view.text.starts_with("Step "), "{view:?}");
        assert!(view.position.contains("Esc stops"), "{view:?}");
        let t = frame(&mut a, size);
        let text = screen_text(t.backend().buffer());
        let heading = view.text.lines().next().unwrap();
        let words: String = heading.chars().take(20).collect();
        assert!(text.contains(&words), "{words:?} not on screen:\n{text}");
        assert!(
            text.contains("▶ playing · Esc stops") || text.contains("▶ Enter"),
            "{text}"
        );
        assert!(
            !text.contains("lesson play ID"),
            "no stale usage hint: {text}"
        );
        drive(&mut a, size, vec![key(KeyCode::Esc)]);
        assert!(a.playback.is_none());
        assert!(a.lesson.is_none(), "the pane goes with the playback");
    }
}

/// Issue 36: `dash --record` on a real terminal (a pty from util-linux `script`) writes a
/// valid asciicast v2 file whose last event clears the screen, so the shell's prompt does
/// not overprint the last frame after `asciinema play`. Skipped without `script` or /proc.
#[test]
fn a_dashboard_recording_ends_with_a_clear_screen() {
    use std::process::{Command, Stdio};
    let has_script = Command::new("script")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_script || !std::path::Path::new("/proc/self/task").exists() {
        eprintln!("skipped: no util-linux script or /proc");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_cni-csi-lab");
    let dir = std::env::temp_dir().join(format!("lab-dash-cast-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cast = dir.join("dash.cast");
    let mut script = Command::new("script")
        .args([
            "-qefc",
            &format!(
                "stty rows 30 cols 100; exec {bin} dash --record {}",
                cast.display()
            ),
            "/dev/null",
        ])
        .env("TERM", "xterm")
        .env("SHELL", "/bin/sh")
        .env("CNI_CSI_LAB_HISTORY", "")
        .env("CNI_CSI_LAB_PROGRESS", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("script runs");
    let children = format!("/proc/{0}/task/{0}/children", script.id());
    let start = std::time::Instant::now();
    let child = loop {
        let text = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(pid) = text.split_whitespace().find(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe == std::path::Path::new(bin))
        }) {
            break pid.to_string();
        }
        if start.elapsed().as_secs() >= 20 {
            let _ = script.kill();
            let _ = script.wait();
            panic!("the dashboard did not start under script within 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        Command::new("kill")
            .args(["-TERM", &child])
            .status()
            .unwrap()
            .success()
    );
    let start = std::time::Instant::now();
    while script.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() >= 20 {
            let _ = Command::new("kill").args(["-KILL", &child]).status();
            let _ = script.kill();
            let _ = script.wait();
            panic!("the dashboard was still running 20 s after SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&cast).expect("the recording");
    let _ = std::fs::remove_dir_all(&dir);
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["version"], 2);
    let events: Vec<serde_json::Value> = lines
        .map(|l| serde_json::from_str(l).expect("an event is JSON"))
        .collect();
    assert!(events.len() >= 2, "frames were recorded: {text}");
    let drawn: String = events.iter().filter_map(|e| e[2].as_str()).collect();
    assert!(
        drawn.contains("cni-csi-lab"),
        "a frame of the dashboard: {drawn:?}"
    );
    let last = events.last().unwrap();
    assert_eq!(last[1], "o");
    assert!(
        last[2]
            .as_str()
            .unwrap()
            .ends_with(cni_csi_lab::cast::CLEAR_SCREEN),
        "{last}"
    );
}

/// Issue 35: the IPAM pane guessed "(no pod: raw `cni add`?)" for every lease no pod holds,
/// and showed the old network's store as `range ? · free 0`. A lease whose pod was deleted
/// after a network switch (its DEL ran the new chain) is labelled a leak, the store as one
/// the node's config no longer names; a raw `cni add` is named as such.
#[test]
fn the_ipam_pane_labels_a_lease_the_old_chain_left_behind() {
    let mut a = after(
        crate::common::lab(),
        LARGE,
        &[
            "pod create web --node node-1",
            "cni add raw1 --node node-2",
            "network use calico-bgp",
            "pod delete web",
            "show ipam node-1",
        ],
    );
    let text = screen_text(frame(&mut a, LARGE).backend().buffer());
    assert!(text.contains("leaked (net changed)"), "{text}");
    assert!(
        text.contains("not in the node's network config now"),
        "{text}"
    );
    assert!(
        !text.contains("range ?") && !text.contains("free 0"),
        "{text}"
    );
    let mut a = after(
        crate::common::lab(),
        LARGE,
        &["cni add raw1 --node node-1", "show ipam node-1"],
    );
    let text = screen_text(frame(&mut a, LARGE).backend().buffer());
    assert!(text.contains("raw `cni add`"), "{text}");
}

// ---------------------------------------------------------------------------------------
// The dashboard during a lesson (issue 35): what the step is about, from its typed checks.

/// A lesson started and moved to step `n` by `skip` (the lab does each step before).
fn at_step(id: &str, n: usize, size: (u16, u16)) -> App {
    let mut lines = vec![format!("lesson start {id}")];
    lines.extend(std::iter::repeat_n("skip".to_string(), n - 1));
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    after(crate::common::lab(), size, &lines)
}

/// The CNI plugin and the pod of the records the Wire pane shows.
fn wire_pane_calls(a: &App) -> Vec<(String, String)> {
    use lab_engine::record::wire::WireRecord;
    wire_pane_records(a)
        .into_iter()
        .filter_map(|s| match a.desk.lab.wire().get(s)? {
            WireRecord::Cni(c) => {
                let pod = c
                    .env
                    .args
                    .split(';')
                    .find_map(|kv| kv.strip_prefix("K8S_POD_NAME="));
                Some((c.plugin_type.clone(), pod.unwrap_or("").to_string()))
            }
            WireRecord::Csi(c) => Some((c.rpc.to_string(), String::new())),
        })
        .collect()
}

/// ch3's step about portmap's prevResult: the Wire pane has the focus and shows portmap's
/// ADD for `api` (not the chain's bridge ADD), and Calls keeps that `exec` line in view
/// marked `▶`; at 100×30 the Wire pane sits in the grid beside the lesson.
#[test]
fn the_portmap_step_shows_portmaps_record() {
    for size in [(100, 30), (120, 40)] {
        let mut a = at_step("ch3-architecture", 5, size);
        assert_eq!(a.lesson.as_ref().and_then(|l| l.step), Some(5));
        assert_eq!(a.ui.focus, Pane::Wire, "{size:?}");
        assert_eq!(
            wire_pane_calls(&a),
            [("portmap".to_string(), "api".to_string())],
            "{size:?}"
        );
        let t = frame(&mut a, size);
        let text = screen_text(t.backend().buffer());
        assert!(
            text.contains("portmap on node-1  ADD  exit 0"),
            "{size:?}: {text}"
        );
        let screen = tui::view::layout(&a, t.backend().buffer().area);
        assert!(
            screen.rect(Pane::Lesson).is_some(),
            "{size:?}: the step stays in view"
        );
        if size.0 >= 120 {
            assert!(text.contains("▶"), "Calls marks the step's call: {text}");
        }
        insta::assert_snapshot!(format!("lesson_portmap_{}x{}", size.0, size.1), t.backend());
    }
}

/// ch5's bandwidth step: after the learner's pod create, the Wire pane shows bandwidth's
/// ADD for `loader`, though the chain's newest CNI ADD began with bridge.
#[test]
fn the_bandwidth_step_shows_bandwidths_record_after_the_pod_create() {
    let mut a = at_step("ch5-core-modules", 1, (120, 40));
    assert_eq!(a.ui.focus, Pane::Wire);
    a.run_command("pod create loader --node node-1 --bandwidth-egress 500M");
    assert_eq!(
        wire_pane_calls(&a),
        [("bandwidth".to_string(), "loader".to_string())]
    );
    // Off the lesson, the wire pane follows the whole chain again.
    let mut b = after(
        crate::common::lab(),
        (120, 40),
        &["pod create loader --node node-1 --bandwidth-egress 500M"],
    );
    assert_eq!(
        wire_pane_calls(&b).first().map(|c| c.0.as_str()),
        Some("bridge")
    );
    frame(&mut b, (120, 40));
}

/// During ch5's first policy step the lesson pane shows the flow's verdict as it is now:
/// allowed on flannel, which enforces nothing, and what the policies say.
#[test]
fn a_policy_step_shows_the_verdict_of_its_flow() {
    let size = (120, 40);
    let mut a = at_step("ch5-core-modules", 3, size);
    assert!(
        a.lesson.as_ref().unwrap().verdicts.is_empty(),
        "no pods yet"
    );
    for l in [
        "pod create web --node node-1 --label app=web",
        "pod create db --node node-2 --label app=db",
        "policy create deny-all --select '' --types Ingress",
    ] {
        a.run_command(l);
    }
    // The task's flow, and the way back the step also checks (deny-all selects every pod,
    // web too).
    let v = a.lesson.as_ref().unwrap().verdicts.clone();
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!(
        (v[0].src.as_str(), v[0].dst.as_str()),
        ("web", "db"),
        "{v:?}"
    );
    assert_eq!(
        (v[1].src.as_str(), v[1].dst.as_str()),
        ("db", "web"),
        "{v:?}"
    );
    assert!(
        v.iter()
            .all(|v| v.allowed && !v.enforced && !v.policies_allow),
        "{v:?}"
    );
    let text = screen_text(frame(&mut a, size).backend().buffer());
    assert!(text.contains("Policy: web → db:5432/TCP allowed"), "{text}");
    assert!(text.contains("the policies say denied"), "{text}");
}

/// A step's text is in the Lesson pane, not also in the Output pane, where the pane is on
/// screen; below the grid's size the Output keeps it.
#[test]
fn the_step_text_is_not_printed_twice() {
    let prose = "A CNI plugin is not a daemon";
    for (size, in_output) in [((160, 48), false), ((100, 30), false), ((70, 20), true)] {
        let a = after(crate::common::lab(), size, &["lesson start ch2-core-ideas"]);
        let output: String = a.ui.output.iter().map(|l| l.text() + "\n").collect();
        let pane = &a.lesson.as_ref().unwrap().text;
        assert!(pane.contains(prose), "{pane}");
        assert!(output.contains("── Step 1/"), "{output}");
        assert_eq!(output.contains(prose), in_output, "{size:?}: {output}");
        assert_eq!(
            output.contains("the step's text is in the Lesson pane"),
            !in_output,
            "{size:?}: {output}"
        );
    }
}

/// ch5's Multi-Attach step brings the Volumes pane forward (its `Dashboard:` line), and the
/// pane shows node-2's refusal: the RWO volume attached to node-1, `s2` waiting.
#[test]
fn the_volumes_pane_shows_a_multi_attach_refusal() {
    let size = (120, 40);
    let mut a = at_step("ch5-core-modules", 21, size);
    assert_eq!(a.ui.focus, Pane::Volumes);
    for l in [
        "pvc create state --size 1Gi",
        "pod create s1 --node node-1 --pvc state",
        "pod create s2 --node node-2 --pvc state",
    ] {
        a.run_command(l);
    }
    let text = screen_text(frame(&mut a, size).backend().buffer());
    assert!(
        text.contains("✗ Multi-Attach error: attached to node-1 · waiting: s2"),
        "{text}"
    );
    // A volume several nodes may attach (RWX) is refused nowhere.
    let mut b = after(
        crate::common::lab(),
        size,
        &[
            "pvc create shared --size 1Gi --access RWX --mode Block",
            "pod create b1 --node node-1 --pvc shared",
            "pod create b2 --node node-2 --pvc shared",
        ],
    );
    let text = screen_text(frame(&mut b, size).backend().buffer());
    assert!(!text.contains("Multi-Attach"), "{text}");
}

/// After `reset` the IPAM pane marks nothing released: no DEL ran, the node's store was
/// wiped with the rest of the lab (issue 37 §5). A `pod delete` still marks its lease. On
/// the old main the reset drew `✗ 10.244.1.2 released`.
#[test]
fn reset_releases_nothing_in_the_ipam_pane() {
    for size in [SMALL, LARGE] {
        let mut a = after(
            crate::common::lab(),
            size,
            &["pod create web --node node-1", "show ipam node-1", "reset"],
        );
        a.ui.focus = Pane::Ipam;
        let text = screen_text(frame(&mut a, size).backend().buffer());
        assert!(a.derived.ipam.removed.is_empty(), "{size:?}");
        assert!(!text.contains("released"), "{size:?}\n{text}");
        let mut a = after(
            crate::common::lab(),
            size,
            &[
                "pod create web --node node-1",
                "show ipam node-1",
                "pod delete web",
            ],
        );
        a.ui.focus = Pane::Ipam;
        let text = screen_text(frame(&mut a, size).backend().buffer());
        assert!(text.contains("✗ 10.244.1.2"), "{size:?}\n{text}");
        assert!(text.contains("released (held "), "{size:?}\n{text}");
    }
}

/// In step mode a claim nobody has provisioned yet is drawn at its real stage, Pending
/// before CREATED, and at CREATED once `reconcile` ran CreateVolume (issue 37 §5). On the
/// old main the claim with no volume was drawn at CREATED.
#[test]
fn a_claim_with_no_volume_yet_is_drawn_pending() {
    for size in [SMALL, LARGE] {
        let mut a = after(
            crate::common::lab(),
            size,
            &["mode step", "pvc create data --size 1Gi"],
        );
        a.ui.focus = Pane::Volumes;
        let text = screen_text(frame(&mut a, size).backend().buffer());
        assert!(text.contains("default/data → — → —"), "{size:?}\n{text}");
        assert!(text.contains("◉ Pending ━ ○ CREATED"), "{size:?}\n{text}");
        assert!(!text.contains("◉ CREATED"), "{size:?}\n{text}");
        a.run_command("reconcile");
        a.ui.focus = Pane::Volumes;
        let text = screen_text(frame(&mut a, size).backend().buffer());
        assert!(!text.contains("Pending ━"), "{size:?}\n{text}");
        assert!(text.contains("◉ CREATED"), "{size:?}\n{text}");
    }
}

// ---------------------------------------------------------------------------------------
// The timeline bar.

/// The row of the timeline bar, if it is on screen.
fn timeline_row(buf: &Buffer) -> Option<String> {
    screen_text(buf)
        .lines()
        .find(|l| l.starts_with(" timeline "))
        .map(str::to_string)
}

#[test]
fn the_timeline_bar_scrubs_with_brackets_and_every_pane_follows() {
    // No events, no bar.
    let mut a = app(crate::common::lab(), SMALL);
    let t = frame(&mut a, SMALL);
    assert_eq!(timeline_row(t.backend().buffer()), None);
    for size in [SMALL, (120, 40), (200, 50)] {
        let mut a = after(crate::common::lab(), size, PODS);
        let t = frame(&mut a, size);
        insta::assert_snapshot!(
            format!("timeline_present_{}x{}", size.0, size.1),
            t.backend()
        );
        let bar = timeline_row(t.backend().buffer()).expect("the bar after three events");
        assert!(bar.contains(" timeline 3/3 "), "{bar}");
        // Two events back: the lab is after event 1, the bar says so, the panes show it.
        let t = drive(&mut a, size, vec![key(KeyCode::Esc), ch('['), ch('[')]);
        insta::assert_snapshot!(
            format!("timeline_rewound_{}x{}", size.0, size.1),
            t.backend()
        );
        let bar = timeline_row(t.backend().buffer()).unwrap();
        assert!(bar.contains(" timeline 1/3 rewound "), "{bar}");
        assert_eq!(a.desk.lab.position().at, 1);
        assert!(
            a.desk.lab.summary().text().contains("1 pod"),
            "{}",
            a.desk.lab.summary().text()
        );
        // One forward: after event 2.
        drive(&mut a, size, vec![ch(']')]);
        assert_eq!(a.desk.lab.position().at, 2);
    }
    // At the start `[` explains itself and changes nothing; at the present `]` does.
    let mut a = after(crate::common::lab(), LARGE, &PODS[..1]);
    drive(&mut a, LARGE, vec![key(KeyCode::Esc), ch('['), ch('[')]);
    assert_eq!(a.desk.lab.position().at, 0);
    let flash =
        a.ui.flash
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
    assert!(flash.contains("at the start of the timeline"), "{flash}");
    drive(&mut a, LARGE, vec![ch(']')]);
    assert_eq!(a.desk.lab.position().at, 1);
    drive(&mut a, LARGE, vec![ch(']')]);
    let flash =
        a.ui.flash
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
    assert!(flash.contains("at the present (event 1)"), "{flash}");
}

#[test]
fn a_command_typed_at_a_rewound_point_forks_with_the_repls_note() {
    let mut a = after(crate::common::lab(), LARGE, PODS);
    drive(&mut a, LARGE, vec![key(KeyCode::Esc), ch('['), ch('[')]);
    let mut keys = vec![ch(':')];
    keys.extend(typed("pod create late --node node-2"));
    keys.push(key(KeyCode::Enter));
    let t = drive(&mut a, LARGE, keys);
    let output: Vec<String> = a.ui.output.iter().map(|l| l.text()).collect();
    assert!(
        output.iter().any(|l| l
            .starts_with("forked after event 1: events 2 to 3 of the old timeline are dropped")),
        "{output:#?}"
    );
    assert_eq!(a.desk.lab.position().at, 2);
    assert_eq!(a.desk.lab.position().of, 2);
    let bar = timeline_row(t.backend().buffer()).unwrap();
    assert!(bar.contains(" timeline 2/2 "), "{bar}");
    assert!(bar.contains("2 pod create late --nod…"), "{bar}");
}

/// `get pods -w` in the dashboard (issue 37 §4): the output pane shows each later command's
/// changes under its echo, the footer says what is watched and that Esc stops it; Esc ends
/// the watch, and the next command streams nothing.
#[test]
fn get_w_streams_under_each_command_until_esc() {
    for (size, name) in [(LARGE, "160x48"), (SMALL, "80x24")] {
        let mut a = after(
            crate::common::lab(),
            size,
            &["pod create api", "get pods -w", "label pod api tier=a"],
        );
        let t = frame(&mut a, size);
        let text = screen_text(t.backend().buffer());
        assert!(text.contains("watching pods — Esc stops"), "{text}");
        let echo = text.find("lab> label pod api tier=a").expect("the echo");
        assert!(
            text[echo..].contains("api    1/1     Running"),
            "the streamed row under the label: {text}"
        );
        insta::assert_snapshot!(format!("watch_{name}"), t.backend());
        drive(&mut a, size, vec![key(KeyCode::Esc)]);
        assert_eq!(a.desk.watching(), None);
        a.run_command("label pod api tier=b --overwrite");
        let t = frame(&mut a, size);
        let text = screen_text(t.backend().buffer());
        assert!(text.contains("── watch of pods stopped"), "{text}");
        assert!(!text.contains("watching pods"), "{text}");
        let echo = text.find("lab> label pod api tier=b").expect("the echo");
        assert!(
            !text[echo..].contains("api    1/1"),
            "nothing streams after Esc: {text}"
        );
        insta::assert_snapshot!(format!("watch_stopped_{name}"), t.backend());
    }
}

/// The first command brings the timeline bar, which borrows the Output strip's last row;
/// that must not tip its output (a pod's dozen lines of events) into taking over the screen
/// at the browser page's size: the cluster stays in view with the new pod in it.
#[test]
fn the_first_command_keeps_the_cluster_in_view_though_the_timeline_bar_appears() {
    for size in [(128u16, 30u16), (128, 33)] {
        let mut a = app(crate::common::lab(), size);
        frame(&mut a, size);
        let mut keys = typed("pod create web --node node-1");
        keys.push(key(KeyCode::Enter));
        let t = drive(&mut a, size, keys);
        let text = screen_text(t.backend().buffer());
        assert!(timeline_row(t.backend().buffer()).is_some(), "{text}");
        assert!(
            text.lines()
                .any(|l| l.contains("eth0 10.244.1.2/24") && l.contains(" web ")),
            "{size:?}: Topology's row for web is hidden:\n{text}"
        );
    }
}

/// A state pane with more rows than it shows says so on its bottom border, at the class
/// sizes that show the panes side by side: how many rows are below (and, scrolled, above).
#[test]
fn a_pane_with_more_rows_than_it_shows_says_how_many() {
    // The cue sits on a pane's bottom border, just before its corner.
    let on_a_bottom_border = |l: &str| {
        l.contains(" more ")
            && l.contains('↓')
            && ["┘", "╯", "┛", "╝"].iter().any(|c| l.contains(c))
    };
    let mut lab = crate::common::lab();
    for i in 0..40 {
        lab.execute(&format!("pod create p{i:02} --node node-1"))
            .unwrap();
    }
    // (At 80×24 the panes are tabs, each shown alone.)
    for size in &CLASS_SIZES[1..] {
        let size = *size;
        let mut a = app(lab.clone(), size);
        let screen = screen_text(frame(&mut a, size).backend().buffer());
        assert!(
            screen.lines().any(on_a_bottom_border),
            "{size:?}: a cue under a pane with rows below\n{screen}"
        );
    }
    // Nothing to scroll: no cue.
    let mut a = app(crate::common::lab(), LARGE);
    let screen = screen_text(frame(&mut a, LARGE).backend().buffer());
    assert!(!screen.lines().any(on_a_bottom_border), "{screen}");
}

/// At 80×24 a lesson's playback keeps the step's text in the Lesson pane beside the
/// Output, as the teaching page promises: an output that took the screen before the
/// playback gives it back, and a long one during it does not take it (the strip's "↓ more"
/// cue says what is below). The pane counts steps, then quizzes, as the headings do. With
/// the Output focused by hand, the step text lands in it as prose the pane joins and wraps
/// to its own width (the source wraps at ~90 columns).
#[test]
fn lesson_play_at_80x24_keeps_the_step_in_the_lesson_pane() {
    let mut a = app(crate::common::lab(), SMALL);
    let mut ev = typed(":pod create a --node node-1");
    ev.push(key(KeyCode::Enter));
    drive(&mut a, SMALL, ev);
    assert_eq!(
        a.ui.focus,
        tui::Pane::Output,
        "a pod's ADD takes the 80×24 screen"
    );
    let mut ev = typed(":lesson play ch2-core-ideas --speed 50");
    ev.push(key(KeyCode::Enter));
    drive(&mut a, SMALL, ev);
    assert_ne!(
        a.ui.focus,
        tui::Pane::Output,
        "the playback gives the screen back"
    );
    let step2 = |a: &App| {
        a.lesson
            .as_ref()
            .is_some_and(|l| l.text.contains("saw it. The"))
    };
    for _ in 0..2000 {
        if step2(&a) {
            break;
        }
        a.update(tui::Action::Tick);
    }
    assert!(step2(&a), "step 2's text is in the Lesson pane");
    assert_ne!(a.ui.focus, tui::Pane::Output, "no output took the screen");
    let position = a.lesson.as_ref().unwrap().position.clone();
    assert!(position.starts_with("step 2/21"), "{position}");
    let text = screen_text(frame(&mut a, SMALL).backend().buffer());
    assert!(
        text.contains("8 Lesson") && text.contains("step 2/21"),
        "{text}"
    );

    // The Output focused by hand: the next step's text lands there as prose.
    let alt7 = Event::Key(KeyEvent::new(KeyCode::Char('7'), KeyModifiers::ALT));
    drive(&mut a, SMALL, vec![alt7]);
    assert_eq!(a.ui.focus, tui::Pane::Output);
    let step3 = |a: &App| a.ui.output.iter().any(|l| l.text().contains("Step 3/21"));
    for _ in 0..2000 {
        if step3(&a) {
            break;
        }
        a.update(tui::Action::Tick);
    }
    assert!(step3(&a), "step 3's heading reached the Output");
    assert!(
        a.ui.output.iter().any(|l| !l.spans.is_empty()
            && l.spans
                .iter()
                .all(|s| s.role == lab_engine::render::Role::Prose)),
        "the step's text is prose in the Output"
    );
}

/// The routes pane prints a dual-stack namespace's tables as `show routes` does: `ip route`,
/// then `ip -6 route` under its own prompt with the kernel's link-local route, for the node
/// and for the selected pod, at both sizes.
#[test]
fn the_routes_pane_prints_ipv6_under_its_own_prompt() {
    let dir = std::env::temp_dir().join(format!("lab-tui-ds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("00-ds.conflist");
    std::fs::write(
        &path,
        r#"{"cniVersion":"1.0.0","name":"ds","plugins":[{"type":"bridge","bridge":"cni0",
        "isGateway":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.1.0/24"}],
        [{"subnet":"fd00:1::/120"}]],"routes":[{"dst":"0.0.0.0/0"},{"dst":"::/0"}]}}]}"#,
    )
    .unwrap();
    let load = format!("cni conf load {} --node node-1", path.display());
    for size in [LARGE, SMALL] {
        let mut a = after(
            crate::common::lab(),
            size,
            &[&load, "pod create a --node node-1"],
        );
        a.ui.sel_node = Some("node-1".into());
        a.ui.sel_pod = Some(("default".into(), "a".into()));
        a.run_command("get pods");
        let rows = &a.derived.routes.rows;
        let at = rows
            .iter()
            .position(|r| *r == tui::app::RouteRow::Prompt("ip -6 route"))
            .expect("the node's IPv6 routes have their prompt");
        let line = |r: &tui::app::RouteRow| match r {
            tui::app::RouteRow::Route(f) => f.line.clone(),
            other => panic!("{other:?}"),
        };
        assert!(
            rows[..at]
                .iter()
                .all(|r| !line(r).contains("fd00") && !line(r).starts_with("fe80")),
            "{rows:?}"
        );
        assert!(
            rows[at + 1..]
                .iter()
                .any(|r| line(r) == "fd00:1::/120 dev cni0 proto kernel metric 256 pref medium"),
            "{rows:?}"
        );
        let alt3 = Event::Key(KeyEvent::new(KeyCode::Char('3'), KeyModifiers::ALT));
        let t = drive(&mut a, size, vec![key(KeyCode::Esc), alt3]);
        assert_eq!(a.ui.focus, Pane::Routes);
        let text = screen_text(t.backend().buffer());
        assert!(text.contains("node-1 (host) $ ip route"), "{text}");
        // Scrolled to the IPv6 table's prompt.
        a.ui.scroll[Pane::Routes.index()] = 1 + at;
        let t = drive(&mut a, size, vec![]);
        let text = screen_text(t.backend().buffer());
        assert!(
            text.contains("node-1 (host) $ ip -6 route")
                && text.contains("  fd00:1::/120 dev cni0 proto kernel metric 256 pref medium"),
            "{text}"
        );
        // Scrolled to the end: the pod's two tables.
        a.ui.scroll[Pane::Routes.index()] = 1000;
        let t = drive(&mut a, size, vec![]);
        let text = screen_text(t.backend().buffer());
        assert!(
            text.contains("pod default/a (netns) $ ip -6 route"),
            "{text}"
        );
        assert!(text.contains("fe80::/64 dev eth0"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// QA 24 §4: at 100×30 a typed command that changes the cluster keeps the four state panes
/// in view, its output in the strip under them (the book's tour: follow the Volumes pane
/// to PUBLISHED); a long text that changes nothing (`help`) takes the screen, and one Esc
/// brings the panes back, the keys acting on them (at 80×24 too).
#[test]
fn a_command_s_long_output_keeps_the_panes_and_one_esc_returns_from_help() {
    for size in [(100u16, 30u16), SMALL] {
        let mut a = app(crate::common::lab(), size);
        let mut ev = Vec::new();
        for l in [
            "pod create web --node node-1 --label app=web",
            "pvc create data --size 1Gi",
            "pod create db --node node-2 --label app=db --pvc data",
        ] {
            ev.extend(typed(l));
            ev.push(key(KeyCode::Enter));
        }
        let t = drive(&mut a, size, ev);
        let want = if size.0 >= 100 { 4 } else { 2 };
        if size.0 >= 100 {
            let shown = grid_panes(&a, t.backend().buffer().area);
            assert_eq!(shown.len(), want, "{size:?}: {shown:?}");
            let text = screen_text(t.backend().buffer());
            assert!(text.contains("◉ PUBLISHED"), "{size:?}:\n{text}");
            assert!(text.contains("pod/db created"), "{size:?}:\n{text}");
        } else {
            // At 80×24 the strip is four rows: the call log takes the screen until Esc.
            assert_eq!(a.ui.focus, Pane::Output, "{size:?}");
            drive(&mut a, size, vec![key(KeyCode::Esc)]);
        }
        // `help` changes nothing and is long: it takes the screen; one Esc gives it back.
        let mut ev = typed("help");
        ev.push(key(KeyCode::Enter));
        drive(&mut a, size, ev);
        assert_eq!(a.ui.focus, Pane::Output, "{size:?}");
        let t = drive(&mut a, size, vec![key(KeyCode::Esc)]);
        assert_eq!(
            a.ui.mode,
            Mode::Normal,
            "{size:?}: the keys act on the panes"
        );
        assert_ne!(a.ui.focus, Pane::Output, "{size:?}");
        assert_eq!(
            grid_panes(&a, t.backend().buffer().area).len(),
            want,
            "{size:?}"
        );
    }
}

/// QA 24 §5: at 100×30 `lesson play` keeps the step's task in view in the Lesson pane
/// (above the text, as a lesson's goal), and the pane says `↓ N more` when its text
/// goes on below, as the other panes do.
#[test]
fn the_lesson_pane_keeps_the_task_and_says_there_is_more() {
    let size = (100, 30);
    let mut a = app(crate::common::lab(), size);
    let mut ev = typed("lesson play ch7-hands-on --step --speed 4");
    ev.push(key(KeyCode::Enter));
    drive(&mut a, size, ev);
    for _ in 0..400 {
        if a.lesson
            .as_ref()
            .is_some_and(|l| l.text.starts_with("Step 2/"))
        {
            break;
        }
        if a.playback.as_ref().is_some_and(|p| p.waiting_key) {
            drive(&mut a, size, vec![key(KeyCode::Enter)]);
        }
        a.update(tui::Action::Tick);
    }
    let view = a.lesson.clone().expect("the playback's pane");
    assert!(view.text.starts_with("Step 2/"), "{view:?}");
    assert_eq!(view.goal, "Show the latest bridge ADD.", "{view:?}");
    let t = frame(&mut a, size);
    let buf = t.backend().buffer();
    let text = screen_text(buf);
    assert!(text.contains("Goal: Show the latest bridge ADD."), "{text}");
    let pane = tui::view::layout(&a, buf.area)
        .rect(Pane::Lesson)
        .expect("the Lesson pane is on screen");
    let bottom: String = (pane.x..pane.right())
        .map(|x| buf[(x, pane.bottom() - 1)].symbol().to_string())
        .collect();
    assert!(
        bottom.contains("↓") && bottom.contains("more"),
        "{bottom}\n{text}"
    );
}

/// QA 24 §6: at 100×30 Topology shows both of the default cluster's nodes whole, before
/// any pod (`--big` too) and with two pods on node-1 (the book's `play demo.lab`), Routes
/// and Volumes keeping their rows. (At 80×24 it holds about one node: the book says so.)
#[test]
fn both_nodes_of_the_default_cluster_show_at_the_projector_size() {
    let size = (100, 30);
    for (big, lines) in [
        (false, &[][..]),
        (true, &[][..]),
        (
            false,
            &["pod create a --node node-1", "pod create b --node node-1"][..],
        ),
    ] {
        let mut a = App::new(crate::common::lab(), Theme::build(None, big, true));
        a.update(tui::Action::Resize(size.0, size.1));
        for l in lines {
            a.run_command(l);
        }
        a.update(tui::Action::FocusNth(0));
        let mut a = App::new(crate::common::lab(), Theme::build(None, big, true));
        a.update(tui::Action::Resize(size.0, size.1));
        let t = frame(&mut a, size);
        let buf = t.backend().buffer();
        let text = screen_text(buf);
        let screen = tui::view::layout(&a, buf.area);
        let topo = screen.rect(Pane::Topology).expect("Topology");
        let rows: Vec<String> = (topo.y..topo.bottom())
            .map(|y| {
                (topo.x..topo.right())
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect()
            })
            .collect();
        for node in ["node-1 · zone-1", "node-2 · zone-2"] {
            assert!(
                rows.iter().any(|r| r.contains(node)),
                "big={big}: {node}\n{text}"
            );
        }
        assert!(
            rows.iter().any(|r| r.contains("eth0 192.168.0.2/24")),
            "big={big}: node-2's address\n{text}"
        );
        assert!(
            rows.iter().all(|r| !r.contains("more")),
            "big={big}: nothing of the nodes below\n{text}"
        );
        assert_eq!(grid_panes(&a, buf.area).len(), 4);
    }
}

/// QA 24 §6: at 80×24 `--big` the Lesson pane's progress line was cut at `variant …`: where
/// a bar and the whole position do not fit side by side, the position shows alone.
#[test]
fn the_lesson_pane_shows_the_variant_at_80x24_big() {
    let mut a = App::new(crate::common::lab(), Theme::build(None, true, true));
    a.update(tui::Action::Resize(SMALL.0, SMALL.1));
    a.run_command("lesson start ch7-hands-on --variant 12");
    let t = frame(&mut a, SMALL);
    let buf = t.backend().buffer();
    let pane = tui::view::layout(&a, buf.area)
        .rect(Pane::Lesson)
        .expect("the Lesson pane is on screen");
    let rows: Vec<String> = (pane.y..pane.bottom())
        .map(|y| {
            (pane.x..pane.right())
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect()
        })
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.contains("step 1/22 · quizzes 0/6 · variant 12")),
        "{}",
        screen_text(buf)
    );
}
