//! The reference plugins the lab models, one module each.

use super::plugin::Plugin;

/// Every plugin the lab ships, as installed in `/opt/cni/bin`.
pub fn standard() -> Vec<Box<dyn Plugin>> {
    Vec::new()
}
