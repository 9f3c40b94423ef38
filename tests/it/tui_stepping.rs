//! The dashboard's stepping view (issue 39 §1): `trace … --step` opens the Step panel
//! beside (or in place of) the Output; → and ← move hop by hop, Esc stops; Topology's
//! selection and the Routes pane follow the hop, the route it matched highlighted. Snapshots
//! at 80×24, 120×40 and 200×50, at the first hop, a middle one and the last. `pod create …
//! --pvc CLAIM --step` opens the same panel on its CSI calls; the Volumes pane highlights
//! what the call shown changed (snapshots at 100×30 and 200×50).

use crate::common::dash::{app, drive, find, key, screen_text};
use cni_csi_lab::tui::App;
use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];

fn stepping(size: (u16, u16)) -> App {
    let mut a = app(crate::common::lab(), size);
    for l in [
        "network use flannel-vxlan",
        "pod create web --node node-1",
        "pod create db --node node-2",
        "trace web db --step",
    ] {
        a.run_command(l);
    }
    a
}

fn hop(a: &App) -> Option<usize> {
    a.desk.stepping().map(|s| s.at() + 1)
}

#[test]
fn the_step_panel_at_the_first_a_middle_and_the_last_hop() {
    for size in SIZES {
        let mut a = stepping(size);
        let hops = a.desk.stepping().expect("stepping").len();
        let t = drive(&mut a, size, Vec::new());
        insta::assert_snapshot!(format!("first_{}x{}", size.0, size.1), t.backend());
        // → to the VXLAN hop (7 of 14): the packet inside its outer headers.
        let t = drive(&mut a, size, vec![key(KeyCode::Right); 6]);
        assert_eq!(hop(&a), Some(7));
        insta::assert_snapshot!(format!("middle_{}x{}", size.0, size.1), t.backend());
        let t = drive(&mut a, size, vec![key(KeyCode::Right); hops - 7]);
        assert_eq!(hop(&a), Some(hops));
        insta::assert_snapshot!(format!("last_{}x{}", size.0, size.1), t.backend());
    }
}

#[test]
fn left_goes_back_and_esc_stops_stepping() {
    let size = (200, 50);
    let mut a = stepping(size);
    drive(&mut a, size, vec![key(KeyCode::Right), key(KeyCode::Right)]);
    assert_eq!(hop(&a), Some(3));
    drive(&mut a, size, vec![key(KeyCode::Left)]);
    assert_eq!(hop(&a), Some(2));
    let t = drive(&mut a, size, vec![key(KeyCode::Esc)]);
    assert_eq!(hop(&a), None);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("stepping ended at hop 2/14"), "{text}");
    assert!(!text.contains(" Step hop"), "the panel closed: {text}");
}

#[test]
fn the_route_that_matched_is_highlighted_in_routes_and_its_node_selected() {
    let size = (200, 50);
    let mut a = stepping(size);
    // Hop 5: node-1's route to node-2's podCIDR through flannel.1.
    let t = drive(&mut a, size, vec![key(KeyCode::Right); 4]);
    assert_eq!(a.ui.sel_node.as_deref(), Some("node-1"));
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "10.244.2.0/24 via 10.244.2.0 dev flannel.1 onlink").expect("the route");
    assert!(
        buf[(x, y)].modifier.contains(Modifier::REVERSED),
        "highlighted"
    );
    let (x, y) = find(buf, "default via 192.168.0.254 dev eth0").expect("another route");
    assert!(
        !buf[(x, y)].modifier.contains(Modifier::REVERSED),
        "not highlighted"
    );
    // Hop 10 is on node-2: the selection follows.
    drive(&mut a, size, vec![key(KeyCode::Right); 5]);
    assert_eq!(a.ui.sel_node.as_deref(), Some("node-2"));
}

#[test]
fn arrows_without_a_stepped_trace_say_how_to_start_one() {
    let size = (120, 40);
    let mut a = app(crate::common::lab(), size);
    // On the command line → moves the cursor; among the keys (after Esc) it says why not.
    let t = drive(&mut a, size, vec![key(KeyCode::Esc), key(KeyCode::Right)]);
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("nothing is being stepped"), "{text}");
}

#[test]
fn the_device_at_the_hop_is_highlighted_in_topology() {
    let size = (200, 50);
    let mut a = stepping(size);
    let reversed = |buf: &Buffer, needle: &str| {
        let (x, y) = find(buf, needle).unwrap_or_else(|| panic!("{needle} on screen"));
        buf[(x, y)].modifier.contains(Modifier::REVERSED)
    };
    // Hop 7: node-1's flannel.1 wraps the packet.
    let t = drive(&mut a, size, vec![key(KeyCode::Right); 6]);
    let buf = t.backend().buffer();
    assert!(reversed(buf, "flannel.1 (VXLAN)"));
    assert!(!reversed(buf, "eth0 192.168.0.2/24"));
    // Hop 8: the datagram arrives on node-2's eth0 over the wire.
    let t = drive(&mut a, size, vec![key(KeyCode::Right)]);
    let buf = t.backend().buffer();
    assert!(reversed(buf, "eth0 192.168.0.2/24"));
    assert!(!reversed(buf, "eth0 192.168.0.1/24"));
    assert!(!reversed(buf, "flannel.1 (VXLAN)"));
}

fn csi_stepping(size: (u16, u16)) -> App {
    let mut a = app(crate::common::lab(), size);
    for l in [
        "pvc create data --size 1Gi --class local-wffc",
        "pod create web --pvc data --step",
    ] {
        a.run_command(l);
    }
    a
}

/// The row of the line holding `needle`, and whether its first cell is highlighted.
fn lit_at(buf: &Buffer, needle: &str) -> bool {
    let (x, y) = find(buf, needle).unwrap_or_else(|| panic!("{needle} on screen"));
    buf[(x, y)].modifier.contains(Modifier::REVERSED)
}

#[test]
fn the_step_panel_on_a_csi_flow_and_the_volume_row_it_changed() {
    for size in [(100, 30), (200, 50)] {
        let mut a = csi_stepping(size);
        assert_eq!(a.desk.stepping().map(|s| s.len()), Some(4));
        let t = drive(&mut a, size, Vec::new());
        insta::assert_snapshot!(format!("csi_first_{}x{}", size.0, size.1), t.backend());
        // → → to NodeStageVolume: the staging line is highlighted, the chain no longer.
        let t = drive(&mut a, size, vec![key(KeyCode::Right); 2]);
        assert_eq!(hop(&a), Some(3));
        insta::assert_snapshot!(format!("csi_stage_{}x{}", size.0, size.1), t.backend());
    }
}

#[test]
fn each_call_highlights_what_it_changed_in_volumes() {
    let size = (200, 50);
    let mut a = csi_stepping(size);
    let t = drive(&mut a, size, Vec::new());
    let buf = t.backend().buffer();
    let text = screen_text(buf);
    assert!(text.contains("Step call 1/4"), "{text}");
    // CreateVolume: the chain (claim → PV → volume → attachment).
    assert!(lit_at(buf, "default/data → pvc-"), "{text}");
    assert!(!lit_at(buf, "staging /var"), "{text}");
    // ControllerPublishVolume: still the chain, the attachment on node-1; the node selected.
    drive(&mut a, size, vec![key(KeyCode::Right)]);
    assert_eq!(a.ui.sel_node.as_deref(), Some("node-1"));
    // NodeStageVolume: the staging line.
    let t = drive(&mut a, size, vec![key(KeyCode::Right)]);
    let buf = t.backend().buffer();
    assert!(lit_at(buf, "staging /var"));
    assert!(!lit_at(buf, "default/data → pvc-"));
    assert!(!lit_at(buf, "publish /var"));
    // NodePublishVolume: the pod's publish line.
    let t = drive(&mut a, size, vec![key(KeyCode::Right)]);
    let buf = t.backend().buffer();
    assert!(lit_at(buf, "publish /var"));
    assert!(!lit_at(buf, "staging /var"));
    // Past the last call: the end, the panel closes, nothing highlighted.
    let t = drive(&mut a, size, vec![key(KeyCode::Right)]);
    let buf = t.backend().buffer();
    let text = screen_text(buf);
    assert!(text.contains("end of pod/web's CSI calls"), "{text}");
    assert!(a.desk.stepping().is_none());
    assert!(!lit_at(buf, "publish /var"));
}

/// `pod delete --step` opens the same panel on the teardown: each call says what it took
/// away, and the volume's chain (what is left of it on the node) is highlighted.
#[test]
fn the_teardown_steps_in_the_panel_with_the_volume_lit() {
    for size in [(100, 30), (200, 50)] {
        let mut a = csi_stepping(size);
        a.run_command("step end");
        a.run_command("pod delete web --step");
        assert_eq!(a.desk.stepping().map(|s| s.len()), Some(3));
        let t = drive(&mut a, size, Vec::new());
        let text = screen_text(t.backend().buffer());
        assert!(text.contains("Step call 1/3"), "{text}");
        assert!(text.contains("NodeUnpublishVolu"), "{text}");
        // The panel cuts long lines on a narrow screen.
        let wide = size.0 >= 200;
        assert!(!wide || text.contains("unmounted"), "{text}");
        assert!(
            lit_at(t.backend().buffer(), "default/data → pvc-"),
            "{text}"
        );
        let t = drive(&mut a, size, vec![key(KeyCode::Right); 2]);
        let text = screen_text(t.backend().buffer());
        assert!(text.contains("Step call 3/3"), "{text}");
        assert!(!wide || text.contains("detached"), "{text}");
        assert!(text.contains("NODE_READY → CREATED"), "{text}");
    }
}

/// Enter on an empty command line is the next step of a `--step` walk, as the lessons' hints
/// say and as a playback's Enter is its next command (it did nothing). A typed line still
/// runs on Enter.
#[test]
fn enter_on_an_empty_prompt_steps() {
    let size = (120, 40);
    let at = |a: &App| a.desk.stepping().map(|s| s.at() + 1);
    let mut a = csi_stepping(size);
    assert_eq!(at(&a), Some(1));
    drive(&mut a, size, vec![key(KeyCode::Enter)]);
    assert_eq!(at(&a), Some(2), "Enter on the empty prompt");
    drive(&mut a, size, vec![key(KeyCode::Enter)]);
    assert_eq!(at(&a), Some(3), "Enter again");
    let mut typed: Vec<_> = "get pvc".chars().map(|c| key(KeyCode::Char(c))).collect();
    typed.push(key(KeyCode::Enter));
    let t = drive(&mut a, size, typed);
    assert_ne!(at(&a), Some(4), "a typed line is run, not a step");
    let text = screen_text(t.backend().buffer());
    assert!(text.contains("get pvc"), "{text}");
}
