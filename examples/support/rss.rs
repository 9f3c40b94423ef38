//! The process's resident memory, for the examples that report it (`envelope`,
//! `long_session`), included by `#[path]` so it is written once.

/// VmRSS in KiB, from /proc/self/status (0 where there is no /proc).
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
