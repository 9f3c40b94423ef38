//! kube-scheduler's search at scale: from 100 nodes on, a scheduling cycle stops once it
//! has found `numFeasibleNodesToFind` feasible nodes (adaptive `percentageOfNodesToScore`:
//! 50 % − nodes/125, at least 5 %, at least 100 nodes), walking the node tree (zones in
//! turn, nodes in arrival order) from where the previous cycle stopped. Below 100 nodes
//! every node is filtered and scored, as before.

use crate::common::{empty_lab, run};
use lab_engine::engine::Lab;

/// The node the scheduler bound a default-namespace pod to.
fn node_of(lab: &Lab, pod: &str) -> String {
    lab.pod_node(&("default".to_string(), pod.to_string()))
        .unwrap_or_else(|| panic!("{pod} has no node"))
        .to_string()
}

/// An empty lab with `n` nodes `node-001` … in one zone, added in `order`.
fn lab_with(n: u32, order: impl Iterator<Item = u32>) -> Lab {
    let mut lab = empty_lab();
    run(&mut lab, "network use flannel-host-gw --cidr 10.244.0.0/14");
    for i in order.take(n as usize) {
        run(
            &mut lab,
            &format!(
                "node add node-{i:03} --cidr 10.{}.{}.0/24 --ip 192.168.{}.{}",
                244 + i / 256,
                i % 256,
                i / 250,
                i % 250 + 1
            ),
        );
    }
    lab
}

#[test]
fn below_a_hundred_nodes_every_node_is_scored() {
    let mut lab = lab_with(99, 1..=99);
    for p in ["a", "b", "c"] {
        run(&mut lab, &format!("pod create {p}"));
    }
    // LeastAllocated spreads them over the emptiest nodes, ties to the first name.
    assert_eq!(
        [node_of(&lab, "a"), node_of(&lab, "b"), node_of(&lab, "c")],
        ["node-001", "node-002", "node-003"]
    );
}

#[test]
fn at_two_hundred_nodes_each_cycle_searches_a_hundred_from_where_the_last_one_stopped() {
    let mut lab = lab_with(200, 1..=200);
    for p in ["a", "b", "c", "d"] {
        run(&mut lab, &format!("pod create {p}"));
    }
    // 200 nodes: 50 − 1 = 49 % is 98, raised to 100. The first cycle finds node-001 …
    // node-100 feasible and stops; the second starts at node-101.
    assert_eq!(
        [
            node_of(&lab, "a"),
            node_of(&lab, "b"),
            node_of(&lab, "c"),
            node_of(&lab, "d")
        ],
        ["node-001", "node-101", "node-002", "node-102"]
    );
}

#[test]
fn the_walk_follows_the_order_nodes_arrived_in_not_their_names() {
    // 120 nodes added last name first: the first cycle walks node-120 … node-021 and
    // picks the first name among those it scored.
    let mut lab = lab_with(120, (1..=120).rev());
    run(&mut lab, "pod create a");
    assert_eq!(node_of(&lab, "a"), "node-021");
}

#[test]
fn a_pod_no_node_fits_still_hears_about_every_node() {
    let mut lab = lab_with(150, 1..=150);
    let out = run(&mut lab, "pod create picky --node-selector disktype=ssd");
    assert!(
        out.contains(
            "0/150 nodes are available: 150 node(s) didn't match Pod's node affinity/selector. \
             preemption: 0/150 nodes are available: 150 Preemption is not helpful for scheduling."
        ),
        "{out}"
    );
}
