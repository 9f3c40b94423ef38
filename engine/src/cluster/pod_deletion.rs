//! A pod's graceful deletion as the API server makes it: `rest.BeforeDelete`
//! (`staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go`) with the pod strategy's
//! `CheckGracefulDelete` (`pkg/registry/core/pod/strategy.go`). The request's grace
//! period, or the pod's `spec.terminationGracePeriodSeconds`, sets
//! `metadata.deletionGracePeriodSeconds`, and `deletionTimestamp` is the time of the
//! request plus that period: the time by which kubelet must have stopped the containers.
//!
//! The lab's deletes give no grace period (kubectl's default `--grace-period=-1` sends
//! none) and its pods never set `terminationGracePeriodSeconds` (a manifest's is kept
//! out), so a pod's grace period follows from the pod itself and none is stored.

use super::{Object, PodSpec};
use crate::util::time::Millis;

/// `spec.terminationGracePeriodSeconds` as `SetDefaults_PodSpec` sets it, which every lab
/// pod has.
pub const TERMINATION_GRACE_PERIOD_SECONDS: u64 = 30;

/// The grace period a delete that gives none gets (`CheckGracefulDelete`): the pod's
/// termination grace period, or 0 (deleted at once) for a pod never scheduled to a node
/// or already terminal (phase Failed or Succeeded).
pub fn grace_period_seconds(pod: &Object<PodSpec>) -> u64 {
    let terminal = matches!(&*pod.status.phase, "Failed" | "Succeeded");
    if pod.spec.node_name.is_empty() || terminal {
        0
    } else {
        TERMINATION_GRACE_PERIOD_SECONDS
    }
}

/// `metadata.deletionGracePeriodSeconds`: set with `deletionTimestamp`. Neither the node
/// nor the phase of a pod being deleted changes (the scheduler binds no such pod and
/// kubelet admits none), so it is the grace period its delete got.
pub fn deletion_grace_period_seconds(pod: &Object<PodSpec>) -> Option<u64> {
    pod.metadata
        .deletion_tick()
        .map(|_| grace_period_seconds(pod))
}

/// A delete with no grace period of `pod`, requested at `now` (`BeforeDelete`): a pod not
/// being deleted yet gets `deletionTimestamp` = now + its grace period (true); one
/// already being deleted keeps its own, since only a shorter grace period given in the
/// request could bring it forward (false).
pub fn mark_for_deletion(pod: &mut Object<PodSpec>, now: Millis) -> bool {
    if pod.metadata.deletion_tick().is_some() {
        return false;
    }
    let grace = Millis::secs(grace_period_seconds(pod));
    pod.metadata
        .set_deletion_tick(Some(now.saturating_add(grace)));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(node: &str, phase: &str) -> Object<PodSpec> {
        let mut p = Object::new(
            "web",
            "default",
            PodSpec::new(node.into(), Vec::new(), Vec::new(), Default::default()),
        );
        p.status.phase = phase.to_string().into();
        p
    }

    /// `CheckGracefulDelete`: the termination grace period for a pod on a node, 0 for one
    /// never scheduled or already terminal.
    #[test]
    fn a_scheduled_running_pod_gets_its_termination_grace_period() {
        assert_eq!(grace_period_seconds(&pod("node-1", "Running")), 30);
        assert_eq!(grace_period_seconds(&pod("node-1", "Pending")), 30);
        assert_eq!(grace_period_seconds(&pod("", "Pending")), 0);
        assert_eq!(grace_period_seconds(&pod("node-1", "Failed")), 0);
        assert_eq!(grace_period_seconds(&pod("node-1", "Succeeded")), 0);
    }

    /// `BeforeDelete`: deletionTimestamp is the request's time plus the grace period, and
    /// a second delete without a grace period leaves the first one's.
    #[test]
    fn the_deletion_timestamp_is_the_end_of_the_grace_period() {
        let mut p = pod("node-1", "Running");
        assert_eq!(deletion_grace_period_seconds(&p), None);
        assert!(mark_for_deletion(&mut p, Millis::ms(40_500)));
        assert_eq!(p.metadata.deletion_tick(), Some(Millis::ms(70_500)));
        assert_eq!(deletion_grace_period_seconds(&p), Some(30));
        assert!(!mark_for_deletion(&mut p, Millis::secs(50)));
        assert_eq!(p.metadata.deletion_tick(), Some(Millis::ms(70_500)));
        let mut unscheduled = pod("", "Pending");
        assert!(mark_for_deletion(&mut unscheduled, Millis::secs(7)));
        assert_eq!(unscheduled.metadata.deletion_tick(), Some(Millis::secs(7)));
        assert_eq!(deletion_grace_period_seconds(&unscheduled), Some(0));
    }
}
