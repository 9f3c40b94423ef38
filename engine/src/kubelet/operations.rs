//! kubelet's operation executor: each volume operation (mount, unmount, unmount device) runs
//! under a key, and a failed one may not run again under that key before its backoff has
//! passed: 500 ms after the first failure, doubling with each failure in a row, at most
//! 2 min 2 s. It is the volume manager's own retry, apart from the pod worker's (a failed
//! pod sync waits 10 s).
//!
//! After `pkg/volume/util/nestedpendingoperations/nestedpendingoperations.go` (the key
//! `{volumeName podName nodeName}`, printed with Go's `%+v`; an operation under a key whose
//! last one, of another name, is still in its backoff resets that backoff and runs; a success
//! deletes the entry, a failure keeps it) and `pkg/util/goroutinemap/exponentialbackoff/exponential_backoff.go`
//! (`initialDurationBeforeRetry = 500ms`, `maxDurationBeforeRetry = 2m2s`, the
//! `No retries permitted until …` text). Entries are not dropped when a pod goes
//! (kubernetes/kubernetes#116886): a volume's backoff outlives the pod that failed it.
//!
//! Upstream refuses a retry while `time.Since(lastErrorTime) <= durationBeforeRetry` and
//! finds out on its next reconciler pass (every 100 ms); the lab's clock has no reconciler
//! period, so a retry is allowed from `lastErrorTime + durationBeforeRetry` on, the time the
//! message names.

use crate::util::time::{Millis, go_time};
use std::collections::BTreeMap;

/// The backoff after the first failure (`initialDurationBeforeRetry`).
pub(crate) const INITIAL_DURATION_BEFORE_RETRY: Millis = Millis::ms(500);
/// The longest backoff (`maxDurationBeforeRetry`, 2 min 2 s: "slightly offset from 2
/// minutes to make timeouts due to this constant recognizable").
pub(crate) const MAX_DURATION_BEFORE_RETRY: Millis = Millis::ms(122_000);

/// The operation names kubelet's operation generator gives (`GeneratedOperations.OperationName`).
pub(crate) const VOLUME_MOUNT: &str = "volume_mount";
/// `GenerateUnmountVolumeFunc`.
pub(crate) const VOLUME_UNMOUNT: &str = "volume_unmount";
/// `GenerateUnmountDeviceFunc`.
pub(crate) const UNMOUNT_DEVICE: &str = "unmount_device";

/// `ExponentialBackoff.Update`'s next `durationBeforeRetry`: 500 ms first, then double the
/// last, at most 2 min 2 s.
pub(crate) fn next_duration_before_retry(last: Millis) -> Millis {
    if last == Millis::ZERO {
        INITIAL_DURATION_BEFORE_RETRY
    } else {
        last.saturating_mul(2).min(MAX_DURATION_BEFORE_RETRY)
    }
}

#[cfg(test)]
/// `durationBeforeRetry` after `failures` failures in a row (1 = the first).
pub(crate) fn duration_before_retry(failures: u32) -> Millis {
    (0..failures.min(64)).fold(Millis::ZERO, |d, _| next_duration_before_retry(d))
}

/// `operationKey`: the volume's unique name, and the pod (its UID) or node an operation is
/// per; empty for an operation per volume (MountVolume and UnmountDevice of an attachable
/// volume, so two pods on the node never mount it at once).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OperationKey {
    /// `kubernetes.io/csi/<driver>^<volume handle>`.
    pub volume_name: String,
    /// The pod's UID, or "".
    pub pod_name: String,
    /// The node, or "" (kubelet's own operations never name one).
    pub node_name: String,
}

impl OperationKey {
    /// An operation per volume.
    pub fn volume(volume_name: &str) -> Self {
        OperationKey {
            volume_name: volume_name.to_string(),
            pod_name: String::new(),
            node_name: String::new(),
        }
    }

    /// An operation per volume and pod.
    pub fn pod(volume_name: &str, pod_uid: &str) -> Self {
        OperationKey {
            pod_name: pod_uid.to_string(),
            ..OperationKey::volume(volume_name)
        }
    }

    /// Go's `%+v` of the key struct: `{volumeName:… podName:… nodeName:…}`.
    pub(crate) fn go_text(&self) -> String {
        format!(
            "{{volumeName:{} podName:{} nodeName:{}}}",
            self.volume_name, self.pod_name, self.node_name
        )
    }
}

/// One key's entry: its operation name and `ExponentialBackoff`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Backoff {
    /// The operation name the entry has (`operationName`).
    pub operation: &'static str,
    /// `lastErrorTime`.
    pub last_error_time: Millis,
    /// `durationBeforeRetry`.
    pub duration_before_retry: Millis,
    /// `lastError` (the detailed error).
    pub last_error: String,
}

impl Backoff {
    /// When the key may run again.
    pub fn retry_at(&self) -> Millis {
        self.last_error_time
            .saturating_add(self.duration_before_retry)
    }
}

/// `nestedPendingOperations` of one kubelet: the keys whose last operation failed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PendingOperations {
    ops: BTreeMap<OperationKey, Backoff>,
}

impl PendingOperations {
    /// `Run`'s check: when `operation` under `key` may not run yet, the time it may. An
    /// entry still in the backoff of an operation of another name is reset to this one
    /// ("previous operation and new operation are different. reset op. name and exp.
    /// backoff"), and the operation runs.
    pub(crate) fn retry_wait(
        &mut self,
        key: &OperationKey,
        operation: &'static str,
        now: Millis,
    ) -> Option<Millis> {
        let b = self.ops.get_mut(key)?;
        let at = b.retry_at();
        if now >= at {
            return None;
        }
        if b.operation == operation {
            return Some(at);
        }
        *b = Backoff {
            operation,
            ..Backoff::default()
        };
        None
    }

    /// `operationComplete` with an error: the backoff grows; returns the line kubelet logs
    /// (`GenerateNoRetriesPermittedMsg`).
    pub fn failed(
        &mut self,
        key: &OperationKey,
        operation: &'static str,
        detailed_error: String,
        now: Millis,
    ) -> String {
        let b = self.ops.entry(key.clone()).or_insert_with(|| Backoff {
            operation,
            ..Backoff::default()
        });
        b.duration_before_retry = next_duration_before_retry(b.duration_before_retry);
        b.last_error_time = now;
        b.last_error = detailed_error;
        format!(
            "Operation for \"{}\" failed. No retries permitted until {} (durationBeforeRetry {}). Error: {}",
            key.go_text(),
            go_time(b.retry_at()),
            b.duration_before_retry.go_duration(),
            b.last_error
        )
    }

    /// `operationComplete` without an error: the entry goes.
    pub fn succeeded(&mut self, key: &OperationKey) {
        self.ops.remove(key);
    }

    /// Every key in backoff and when it may run again (the save file's state).
    pub(crate) fn retry_times(&self) -> impl Iterator<Item = (&OperationKey, Millis)> {
        self.ops.iter().map(|(k, b)| (k, b.retry_at()))
    }

    /// The earliest time after `now` at which a key in backoff may run again.
    pub fn next_retry(&self, now: Millis) -> Option<Millis> {
        self.ops
            .values()
            .map(Backoff::retry_at)
            .filter(|t| *t > now)
            .min()
    }

    /// Whether nothing is in backoff.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_500ms_to_2m2s() {
        let want = [
            500, 1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 122_000, 122_000,
        ];
        for (i, ms) in want.iter().enumerate() {
            assert_eq!(
                duration_before_retry(i as u32 + 1),
                Millis::ms(*ms),
                "failure {}",
                i + 1
            );
        }
        assert_eq!(duration_before_retry(u32::MAX), MAX_DURATION_BEFORE_RETRY);
    }

    #[test]
    fn a_key_waits_until_its_retry_time_and_success_forgets_it() {
        let mut ops = PendingOperations::default();
        let k = OperationKey::volume("kubernetes.io/csi/d^v");
        assert_eq!(ops.retry_wait(&k, VOLUME_MOUNT, Millis::ZERO), None);
        let line = ops.failed(&k, VOLUME_MOUNT, "boom".into(), Millis::ZERO);
        assert_eq!(
            line,
            "Operation for \"{volumeName:kubernetes.io/csi/d^v podName: nodeName:}\" failed. No retries permitted until 2025-01-01 00:00:00.5 +0000 UTC (durationBeforeRetry 500ms). Error: boom"
        );
        assert_eq!(
            ops.retry_wait(&k, VOLUME_MOUNT, Millis::ms(499)),
            Some(Millis::ms(500))
        );
        assert_eq!(ops.retry_wait(&k, VOLUME_MOUNT, Millis::ms(500)), None);
        let line = ops.failed(&k, VOLUME_MOUNT, "boom".into(), Millis::ms(500));
        assert!(line.contains("until 2025-01-01 00:00:01.5 +0000 UTC (durationBeforeRetry 1s)"));
        ops.succeeded(&k);
        assert!(ops.is_empty());
        // Another pod's key is another operation.
        let p = OperationKey::pod("kubernetes.io/csi/d^v", "uid-1");
        assert_eq!(
            p.go_text(),
            "{volumeName:kubernetes.io/csi/d^v podName:uid-1 nodeName:}"
        );
    }

    #[test]
    fn another_operation_under_the_key_starts_a_fresh_backoff() {
        let mut ops = PendingOperations::default();
        let k = OperationKey::volume("v");
        ops.failed(&k, VOLUME_MOUNT, "a".into(), Millis::ZERO);
        ops.failed(&k, VOLUME_MOUNT, "a".into(), Millis::ms(500));
        // UnmountDevice under the same key is not held back by the mount's backoff, and
        // its own failure starts from 500 ms.
        assert_eq!(ops.retry_wait(&k, UNMOUNT_DEVICE, Millis::secs(1)), None);
        let line = ops.failed(&k, UNMOUNT_DEVICE, "b".into(), Millis::secs(1));
        assert!(line.contains("(durationBeforeRetry 500ms)"), "{line}");
        // Out of backoff, an entry keeps doubling whatever runs next (upstream neither
        // renames nor resets an entry whose backoff has passed).
        let mut ops = PendingOperations::default();
        ops.failed(&k, VOLUME_MOUNT, "a".into(), Millis::ZERO);
        assert_eq!(ops.retry_wait(&k, UNMOUNT_DEVICE, Millis::secs(1)), None);
        let line = ops.failed(&k, UNMOUNT_DEVICE, "b".into(), Millis::secs(1));
        assert!(line.contains("(durationBeforeRetry 1s)"), "{line}");
    }
}
