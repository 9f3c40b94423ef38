//! The reference plugins the lab models, one module each.
