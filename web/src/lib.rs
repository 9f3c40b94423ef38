//! The lab in a browser: the engine and the dashboard (`lab-ui`) compiled to WebAssembly,
//! drawn by ratzilla's canvas backend. [`page`] starts it; the rest are the browser's
//! edges: the files a command names ([`uploads`]), progress and the session in
//! localStorage ([`storage`]), keys ([`keys`]) and the dashboard's host ([`host`]).
//! On any target but wasm32 the crate is empty but for the tests of the edges that need
//! no browser.

#[cfg(any(target_arch = "wasm32", test))]
mod host;
#[cfg(target_arch = "wasm32")]
mod keys;
#[cfg(target_arch = "wasm32")]
mod page;
#[cfg(target_arch = "wasm32")]
mod storage;
#[cfg(any(target_arch = "wasm32", test))]
mod uploads;
