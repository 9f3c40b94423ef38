//! The live dashboard without a terminal: the cluster's wiring, IPAM, routes, volumes, the
//! call log and the wire view, redrawn after every command, with a command line that
//! speaks the same language as the REPL and scripts.
//!
//! Shape (ratatui's event-driven template, `/work/shared/STYLE.md` part C, "TUI: App,
//! Action, state and render"): [`App`] holds the lab and view state; [`keymap::lookup`]
//! turns keys ([`key::KeyEvent`], which each front end makes from its own events) into
//! [`keymap::Action`]s; [`App::update`] applies them (a command line runs through
//! `Desk::execute`, and each tick what the front end's [`host::Host`] received); rendering
//! is `impl Widget for &App`, onto whatever backend the front end has: a terminal
//! (`cni-csi-lab`'s `tui`) or a browser (`web/`).

pub mod app;
pub mod complete;
pub mod host;
pub mod key;
pub mod keymap;
pub mod theme;
pub mod view;

pub use app::App;
pub use keymap::{Action, Mode, Pane};
pub use theme::{Palette, Theme};

use lab_engine::Lab;
