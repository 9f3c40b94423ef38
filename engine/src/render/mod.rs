//! Output as data (`Outcome`), tables, and the plain-text painter used by scripts and tests.

pub mod error;
pub mod escape;
pub mod jsonpath;
pub mod outcome;
pub mod table;
pub mod yaml;

pub use error::{error_prefix, error_text};
pub use escape::escape_controls;
pub use outcome::{Line, Outcome, Role, ShownLine, Span};
pub use table::Table;
