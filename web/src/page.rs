//! The page: the dashboard on a canvas, driven by the browser's keys and animation frames,
//! with a text copy of the screen in the DOM (`#screen-text`, for screen readers, copy and
//! paste, and tests), the session and progress in localStorage, files uploaded and
//! downloaded, and the URL's `?lesson=ID&variant=N` and `?script=LINES` run on load.

use crate::host::Browser;
use crate::storage::{LocalStore, Session};
use crate::uploads::Uploads;
use lab_engine::Lab;
use lab_engine::edge::Edges;
use lab_engine::lesson::{Desk, MemoryStore};
use lab_engine::script::{self, RunOptions};
use lab_ui::keymap::{self, Action, Mode};
use lab_ui::{App, Theme};
use ratatui::Terminal;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratzilla::backend::canvas::CanvasBackendOptions;
use ratzilla::{CanvasBackend, WebRenderer, ratatui};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// How often time passes for the dashboard (playback pacing, messages fading), as the
/// terminal's event loop ticks.
const TICK_MS: f64 = 100.0;

/// At most this many ticks a replayed `lesson play` gets to finish on load.
const REPLAY_TICKS: usize = 100_000;

/// Everything the page holds.
struct Page {
    app: App,
    terminal: Terminal<CanvasBackend>,
    uploads: Arc<Uploads>,
    session: Session,
    /// Whether lines run are kept in the session (not on a `?script=` page: its lab is the
    /// script's, not the session's).
    keeping: bool,
    /// Something changed since the last frame.
    dirty: bool,
    /// When time last passed (performance.now, ms).
    last_tick: f64,
    /// The text copy last written into the DOM.
    shown: String,
}

thread_local! {
    static PAGE: RefCell<Option<Rc<RefCell<Page>>>> = const { RefCell::new(None) };
}

fn document() -> Option<web_sys::Document> {
    web_sys::window()?.document()
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}

/// A lab whose files are the uploads, with the embedded lessons beside it.
fn desk(uploads: &Arc<Uploads>) -> Desk {
    let files: Arc<dyn lab_engine::edge::Files> = uploads.clone();
    Desk::with_lab(Lab::with_edges(Lab::new, Edges::files(files)))
}

/// Start the page (called once the wasm is loaded).
#[wasm_bindgen(start)]
pub fn start() -> Result<(), JsValue> {
    let uploads = Uploads::shared();
    let session = Session::load();
    for (name, text) in &session.files {
        uploads.upload(name, text.as_bytes().to_vec());
    }
    let mut desk = desk(&uploads);
    let script = param("script");
    if let Some(text) = &script {
        // A teacher's commands, run as `cni-csi-lab run FILE` runs them: its output, byte
        // for byte, in #script-output.
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let opts = RunOptions {
            keep_going: false,
            echo: false,
        };
        let _ = script::run(&mut desk, text, opts, &mut out, &mut err);
        if let Some(pre) = document().and_then(|d| d.get_element_by_id("script-output")) {
            pre.set_text_content(Some(&String::from_utf8_lossy(&out)));
        }
        if let Some(pre) = document().and_then(|d| d.get_element_by_id("script-errors")) {
            pre.set_text_content(Some(&String::from_utf8_lossy(&err)));
        }
    }
    // The session replays from the progress it started with, so it runs as it ran.
    desk.lessons.set_store(Box::new(MemoryStore {
        saved: Some(session.progress.clone()),
        why: None,
    }));
    let backend = CanvasBackend::new_with_options(CanvasBackendOptions::new().grid_id("screen"))
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    let terminal = Terminal::new(backend).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let mut app = App::new(desk, Theme::standard()).with_host(Box::new(Browser(uploads.clone())));
    if script.is_none() {
        for line in &session.lines {
            app.run_command(line);
            finish_playback(&mut app);
        }
    }
    app.desk.lessons.set_store(Box::new(LocalStore));
    // What the replay wrote was downloaded when it first ran.
    let _ = uploads.take_written();
    let mut page = Page {
        app,
        terminal,
        uploads,
        session,
        keeping: script.is_none(),
        dirty: true,
        last_tick: now(),
        shown: String::new(),
    };
    if script.is_none()
        && let Some(id) = param("lesson")
    {
        let line = match param("variant") {
            Some(v) => format!("lesson start {id} --variant {v}"),
            None => format!("lesson start {id}"),
        };
        // A reload of the link goes on with the session it started.
        if !page.session.lines.contains(&line) {
            page.run(&line);
        }
    }
    let page = Rc::new(RefCell::new(page));
    listen(&page)?;
    PAGE.with(|p| *p.borrow_mut() = Some(Rc::clone(&page)));
    frames(page);
    Ok(())
}

/// Keys and pastes anywhere on the page but the toolbar go to the dashboard; the keys it
/// takes do not also move the focus or scroll the page.
fn listen(page: &Rc<RefCell<Page>>) -> Result<(), JsValue> {
    let doc = document().ok_or("no document")?;
    let keyed = Rc::clone(page);
    let on_key =
        Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(move |e: web_sys::KeyboardEvent| {
            if in_toolbar(&e) {
                return;
            }
            let Some(k) = crate::keys::key(&ratzilla::event::KeyEvent::from(e.clone())) else {
                return;
            };
            if keyed.borrow_mut().key(&k) {
                e.prevent_default();
            }
        });
    doc.add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref())?;
    on_key.forget();
    let pasted = Rc::clone(page);
    let on_paste =
        Closure::<dyn FnMut(web_sys::ClipboardEvent)>::new(move |e: web_sys::ClipboardEvent| {
            if in_toolbar(&e) {
                return;
            }
            let Some(text) = e.clipboard_data().and_then(|d| d.get_data("text").ok()) else {
                return;
            };
            e.prevent_default();
            let mut p = pasted.borrow_mut();
            apply(&mut p.app, Action::Paste(text));
            p.dirty = true;
        });
    doc.add_event_listener_with_callback("paste", on_paste.as_ref().unchecked_ref())?;
    on_paste.forget();
    Ok(())
}

/// Whether an event happened in the toolbar (its buttons keep their keys).
fn in_toolbar(e: &web_sys::Event) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|el| el.closest("#bar").ok().flatten())
        .is_some()
}

/// Tick a `lesson play` or `play` to its end (a replayed session does not animate).
fn finish_playback(app: &mut App) {
    for _ in 0..REPLAY_TICKS {
        if app.playback.is_none() {
            return;
        }
        if let Some(pb) = &app.playback
            && pb.waiting_key
        {
            apply(app, Action::Submit);
        }
        apply(app, Action::Tick);
    }
}

fn apply(app: &mut App, action: Action) {
    let mut next = Some(action);
    while let Some(a) = next {
        next = app.update(a);
    }
}

impl Page {
    /// A key: its action, and the line it ran kept in the session. Whether the dashboard
    /// took it.
    fn key(&mut self, k: &lab_ui::key::KeyEvent) -> bool {
        let Some(action) = keymap::lookup(self.app.ui.mode, k) else {
            return false;
        };
        let typed = (action == Action::Submit && self.app.ui.mode == Mode::Command)
            .then(|| self.app.ui.prompt.text.trim().to_string());
        let before = (
            self.app.ui.history.len(),
            self.app.ui.history.last().cloned(),
        );
        apply(&mut self.app, action);
        let after = (
            self.app.ui.history.len(),
            self.app.ui.history.last().cloned(),
        );
        let ran = match typed {
            // A kind's listing (`:pods`): the history has it with its colon.
            Some(t) if !t.is_empty() => Some(match after.1 {
                Some(h) if h.strip_prefix(':') == Some(t.as_str()) => h,
                _ => t,
            }),
            Some(_) => None,
            None => (before != after).then_some(after.1).flatten(),
        };
        if let Some(line) = ran {
            self.keep(line);
        }
        self.dirty = true;
        true
    }

    /// Run a line as if typed, and keep it in the session.
    fn run(&mut self, line: &str) {
        self.app.run_command(line);
        self.keep(line.to_string());
        self.dirty = true;
    }

    fn keep(&mut self, line: String) {
        if !self.keeping || matches!(line.as_str(), "quit" | "exit" | "q" | "q!") {
            return;
        }
        self.session.lines.push(line);
        if let Err(e) = self.session.save() {
            web_sys::console::warn_1(&JsValue::from_str(&e));
        }
    }

    /// One animation frame: time passes, the screen is drawn if anything changed, files
    /// written are downloaded.
    fn frame(&mut self) {
        let t = now();
        if t - self.last_tick >= TICK_MS {
            self.last_tick = t;
            let busy = self.app.playback.is_some() || self.app.ui.flash.is_some();
            apply(&mut self.app, Action::Tick);
            self.dirty |= busy;
        }
        if self.app.should_quit() {
            // The browser tab stays: quitting starts a new session instead.
            self.app.ui.quit = false;
        }
        if self.dirty {
            self.dirty = false;
            self.draw();
        }
        for (name, bytes) in self.uploads.take_written() {
            download(&name, &bytes);
        }
    }

    fn draw(&mut self) {
        let Ok(size) = self.terminal.size() else {
            return;
        };
        self.app.ui.area = Rect::new(0, 0, size.width, size.height);
        let app = &self.app;
        let Ok(done) = self.terminal.draw(|f| {
            f.render_widget(app, f.area());
            if let Some(p) = lab_ui::view::cursor_position(app, f.area()) {
                f.set_cursor_position(p);
            }
        }) else {
            return;
        };
        let text = screen_text(done.buffer);
        if self.shown.is_empty()
            && let Some(w) = web_sys::window()
        {
            // When the first frame was on screen, ms after the page started loading.
            let _ = js_sys::Reflect::set(&w, &"labFirstFrame".into(), &now().into());
        }
        if text != self.shown {
            if let Some(pre) = document().and_then(|d| d.get_element_by_id("screen-text")) {
                pre.set_text_content(Some(&text));
            }
            self.shown = text;
        }
    }
}

/// The screen as text: a line per row, trailing blanks trimmed.
fn screen_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        for x in area.left()..area.right() {
            if let Some(c) = buf.cell((x, y)) {
                row.push_str(c.symbol());
            }
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// Hand a file to the browser to save.
fn download(name: &str, bytes: &[u8]) {
    let Some(doc) = document() else { return };
    let parts = js_sys_array(bytes);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence(&parts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Ok(a) = doc.create_element("a")
        && let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>()
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

fn js_sys_array(bytes: &[u8]) -> JsValue {
    let arr = js_sys::Array::new();
    arr.push(&js_sys::Uint8Array::from(bytes));
    arr.into()
}

/// The callback each animation frame calls (it asks for the next one).
type FrameCallback = Closure<dyn FnMut()>;

/// Draw on every animation frame from now on.
fn frames(page: Rc<RefCell<Page>>) {
    let cb: Rc<RefCell<Option<FrameCallback>>> = Rc::new(RefCell::new(None));
    let again = Rc::clone(&cb);
    *cb.borrow_mut() = Some(Closure::new(move || {
        page.borrow_mut().frame();
        if let Some(c) = again.borrow().as_ref() {
            <Terminal<CanvasBackend> as WebRenderer>::request_animation_frame(c);
        }
    }));
    if let Some(c) = cb.borrow().as_ref() {
        <Terminal<CanvasBackend> as WebRenderer>::request_animation_frame(c);
    }
}

fn with_page(f: impl FnOnce(&mut Page)) {
    PAGE.with(|p| {
        if let Some(page) = p.borrow().as_ref() {
            f(&mut page.borrow_mut());
        }
    });
}

/// The page's Files button: keep an uploaded file under its name and say so.
#[wasm_bindgen]
pub fn upload(name: &str, text: &str) {
    with_page(|p| {
        p.uploads.upload(name, text.as_bytes().to_vec());
        p.session.files.insert(name.to_string(), text.to_string());
        p.run(&format!(
            "echo uploaded {name}: `apply -f {name}`, `cni conf load {name}` or `load {name}` reads it"
        ));
    });
}

/// Run a command line as if typed (the page's buttons: download the submission).
#[wasm_bindgen]
pub fn run_line(line: &str) {
    with_page(|p| p.run(line));
}

/// Forget the session (progress stays) and start a fresh lab: the page reloads.
#[wasm_bindgen]
pub fn new_session() {
    let fresh = Session {
        progress: LocalStore::progress(),
        ..Session::default()
    };
    if let Err(e) = fresh.save() {
        web_sys::console::warn_1(&JsValue::from_str(&e));
    }
    if let Some(w) = web_sys::window() {
        let _ = w.location().reload();
    }
}

/// Benchmarks: run a command line and draw the frame it leads to; the ms it took.
#[wasm_bindgen]
pub fn bench_command(line: &str) -> f64 {
    let mut ms = f64::NAN;
    with_page(|p| {
        let t = now();
        p.run(line);
        p.draw();
        ms = now() - t;
    });
    ms
}

/// Benchmarks: move the focus to the next pane (its border, the panes' titles and the
/// footer change) and draw that frame; the ms it took.
#[wasm_bindgen]
pub fn bench_frame() -> f64 {
    let mut ms = f64::NAN;
    with_page(|p| {
        let t = now();
        apply(&mut p.app, Action::FocusNext);
        p.draw();
        ms = now() - t;
    });
    ms
}
