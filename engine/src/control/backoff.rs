//! A controller's work-queue rate limiter: after a failed call on an object the controller
//! waits before it tries that object again, 1s doubling per failure in a row up to 5m —
//! client-go's `ItemExponentialFailureRateLimiter` as external-provisioner,
//! external-attacher, external-resizer and csi-snapshotter configure it
//! (`--retry-interval-start` 1s, `--retry-interval-max` 5m). Each controller owns one;
//! keys are `controller/object` so the call log can say whose retry it is.

use super::Ctx;
use crate::util::time::Millis;
use std::collections::BTreeMap;

/// Controller backoff after the first failed call.
pub const RETRY_BACKOFF: Millis = Millis::secs(1);
/// The longest controller backoff (5 minutes).
pub const RETRY_BACKOFF_MAX: Millis = Millis::secs(300);

/// The delay before retry number `failures` (1 = after the first failure).
pub fn retry_delay(failures: u32) -> Millis {
    let shift = failures.saturating_sub(1).min(16);
    Millis::ms(RETRY_BACKOFF.as_ms() << shift).min(RETRY_BACKOFF_MAX)
}

/// The component and object a backoff key (`controller/object`) names, for the call log.
pub fn backoff_actor(key: &str) -> (&'static str, &str) {
    let (controller, object) = key.split_once('/').unwrap_or((key, ""));
    let actor = match controller {
        "provisioner" | "provisioner-delete" => "external-provisioner",
        "attacher" => "external-attacher",
        "resizer" => "external-resizer",
        "snapshotter" | "snapshotter-delete" => "csi-snapshotter",
        _ => "controller",
    };
    (actor, object)
}

/// Retry times and failure counts by `controller/object`.
#[derive(Debug, Clone, Default)]
pub struct Backoff {
    /// When each object may be tried again.
    retry_at: BTreeMap<String, Millis>,
    /// Failures in a row per object (the delay doubles with each).
    failures: BTreeMap<String, u32>,
}

impl Backoff {
    /// Whether work on `key` waits for a retry time still ahead.
    pub fn waiting(&self, clock: Millis, key: &str) -> bool {
        self.retry_at.get(key).is_some_and(|t| *t > clock)
    }

    /// Note a failure: retry after the backoff, which doubles with each failure in a row.
    /// The call log says when the retry comes.
    pub fn fail(&mut self, ctx: &mut Ctx<'_>, key: String) {
        let n = {
            let n = self.failures.entry(key.clone()).or_insert(0);
            *n += 1;
            *n
        };
        let delay = retry_delay(n);
        let at = ctx.clock.saturating_add(delay);
        let (actor, object) = backoff_actor(&key);
        ctx.log(
            actor,
            "backoff",
            format!(
                "{object}: failure {n} in a row, retry at t={} (`tick {}`; 1s doubling to 5m)",
                at.secs_text(),
                delay.tick_arg()
            ),
        );
        self.retry_at.insert(key, at);
    }

    /// Hold work on `key` until `at` without counting a failure (a restarting container).
    pub fn hold(&mut self, key: &str, at: Millis) {
        self.retry_at.insert(key.to_string(), at);
    }

    /// Work on `key` now, keeping its failures in a row: client-go's `queue.Add` of an item
    /// the rate limiter holds (an informer's update event): the item is processed at once,
    /// and a later failure still waits as long as its count says (`NumRequeues` is only
    /// reset by `Forget`).
    pub fn requeue(&mut self, key: &str) {
        self.retry_at.remove(key);
    }

    /// Forget a failure after success.
    pub fn clear(&mut self, key: &str) {
        self.retry_at.remove(key);
        self.failures.remove(key);
    }

    /// The earliest retry after `now` (a timer of the discrete-event clock).
    pub fn next_retry(&self, now: Millis) -> Option<Millis> {
        self.retry_at.values().copied().filter(|t| *t > now).min()
    }

    /// The retry times, for the save file's state snapshot.
    pub(crate) fn retry_times(&self) -> impl Iterator<Item = (&String, &Millis)> {
        self.retry_at.iter()
    }
}
