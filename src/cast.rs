//! Session recordings for classes: asciicast v2 files, the format `asciinema play` and the
//! asciinema web player read (<https://docs.asciinema.org/manual/asciicast/v2/>): a header
//! line (a JSON object: `version` 2, `width`, `height`, optional `title` and `env`), then one
//! JSON array per line, `[seconds, "o", "text written to the terminal"]`.
//!
//! A marker (`[seconds, "m", "label"]`) opens each lesson step, so a player can jump from
//! step to step.
//!
//! The writers: `lesson play ID --record FILE.cast` ([`CastSink`], which records
//! the lesson's own pacing on a virtual clock, so the same lesson always makes the same
//! file, in a moment); the REPL with `--record` (each prompt, typed line and output, at the
//! time it happened, the plain REPL too); `run FILE --record` (its output, and with
//! `--step`/`--pace` the playback, [`RecordedSink`]); and the dashboard with `--record`
//! ([`SharedTee`], every frame the terminal was sent, then a clear screen). Recording is a
//! front-end matter: the engine only says where a step begins ([`PlaySink::marker`]).

use crate::ansi;
use lab_engine::lesson::play::PlaySink;
use lab_engine::render::Outcome;
use serde_json::json;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

/// An asciicast v2 file being written.
pub struct Cast {
    out: BufWriter<File>,
}

impl Cast {
    /// Create `path` (replacing it) with the header for a `width`×`height` terminal.
    pub fn create(path: &Path, width: u16, height: u16, title: &str) -> io::Result<Cast> {
        let file = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot record to {}: {e}", path.display()),
            )
        })?;
        let mut out = BufWriter::new(file);
        let header = json!({
            "version": 2,
            "width": width,
            "height": height,
            "title": title,
            "env": {"TERM": "xterm-256color", "SHELL": "/bin/bash"},
        });
        writeln!(out, "{header}")?;
        Ok(Cast { out })
    }

    /// One output event at `seconds` from the start. Newlines become CR LF, as a terminal
    /// in raw mode receives them (a player writes the data as it is).
    pub fn output(&mut self, seconds: f64, data: &str) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let data = to_crlf(data);
        // Microsecond precision, as asciinema writes it.
        let at = (seconds.max(0.0) * 1e6).round() / 1e6;
        writeln!(self.out, "{}", json!([at, "o", data]))
    }

    /// A marker at `seconds` (asciicast v2 `"m"` events: a player lists them and jumps to
    /// them, `asciinema play` pauses at them with `-m`); the lab puts one at each lesson step.
    pub fn marker(&mut self, seconds: f64, label: &str) -> io::Result<()> {
        let at = (seconds.max(0.0) * 1e6).round() / 1e6;
        writeln!(self.out, "{}", json!([at, "m", label]))
    }

    /// Write out what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// What a recording writes last so that, played back, the screen is left clear (the
/// shell's prompt then does not overprint the last frame): reset the attributes, home the
/// cursor, clear the screen.
pub const CLEAR_SCREEN: &str = "\x1b[0m\x1b[H\x1b[2J";

/// `\n` → `\r\n`, leaving existing `\r\n` alone.
fn to_crlf(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    let mut prev = '\0';
    for c in s.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// `lesson play … --record`: the playback written to a cast on a virtual clock that
/// advances by the lesson's pacing (typing, pauses), never sleeping.
pub struct CastSink {
    cast: Cast,
    /// Seconds since the start of the recording.
    now: f64,
    /// The first error writing the file, reported when playback ends.
    pub error: Option<io::Error>,
}

impl CastSink {
    /// A sink recording into `cast`.
    pub fn new(cast: Cast) -> Self {
        CastSink {
            cast,
            now: 0.0,
            error: None,
        }
    }

    /// Seconds recorded so far.
    pub fn duration(&self) -> f64 {
        self.now
    }

    /// Flush the file; the first error of the recording, if any.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.cast.flush()
    }

    fn emit(&mut self, data: &str) {
        if self.error.is_none()
            && let Err(e) = self.cast.output(self.now, data)
        {
            self.error = Some(e);
        }
    }
}

impl PlaySink for CastSink {
    fn show(&mut self, out: &Outcome) {
        self.emit(&ansi::paint(out));
    }

    fn marker(&mut self, label: &str) {
        if self.error.is_none()
            && let Err(e) = self.cast.marker(self.now, label)
        {
            self.error = Some(e);
        }
    }

    fn type_command(&mut self, command: &str, millis_per_char: u64) {
        self.emit("lab> ");
        for c in lab_engine::render::escape_controls(command).chars() {
            self.now += millis_per_char as f64 / 1000.0;
            self.emit(&c.to_string());
        }
        self.emit("\n");
    }

    fn pause(&mut self, millis: u64) -> bool {
        self.now += millis as f64 / 1000.0;
        true
    }

    /// A recording has no one to press a key: a step's pause is two seconds.
    fn wait_for_key(&mut self) -> bool {
        self.now += 2.0;
        true
    }
}

/// The REPL's or the dashboard's recorder: events stamped with the time since it started.
pub struct LiveCast {
    cast: Cast,
    start: Instant,
}

impl LiveCast {
    /// Start recording into `cast` now.
    pub fn new(cast: Cast) -> Self {
        LiveCast {
            cast,
            start: Instant::now(),
        }
    }

    /// Record `data` as written now.
    pub fn output(&mut self, data: &str) -> io::Result<()> {
        let at = self.start.elapsed().as_secs_f64();
        self.cast.output(at, data)
    }

    /// A marker now (see [`Cast::marker`]).
    pub fn marker(&mut self, label: &str) -> io::Result<()> {
        let at = self.start.elapsed().as_secs_f64();
        self.cast.marker(at, label)
    }

    /// Write out what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.cast.flush()
    }
}

/// A writer that sends everything to the terminal and, at each flush, what was sent since
/// the last one to the recording (the dashboard's terminal backend writes through it, so
/// the cast holds exactly the frames the terminal drew; the REPL prints its output through
/// one).
pub struct Tee<'a, W: Write> {
    inner: W,
    pending: Vec<u8>,
    cast: &'a mut LiveCast,
}

impl<'a, W: Write> Tee<'a, W> {
    /// Tee `inner` into `cast`.
    pub fn new(inner: W, cast: &'a mut LiveCast) -> Self {
        Tee {
            inner,
            pending: Vec::new(),
            cast,
        }
    }
}

impl<W: Write> Write for Tee<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.pending.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()?;
        if !self.pending.is_empty() {
            let data = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            // The frames are terminal bytes already: no newline conversion wanted, but
            // ratatui writes no bare newlines, so `output` leaves them as they are.
            self.cast.output(&data)?;
            self.cast.flush()?;
        }
        Ok(())
    }
}

/// A recording several writers share (the REPL's stdout and stderr, `csi serve`'s thread).
pub type Shared = std::sync::Arc<std::sync::Mutex<LiveCast>>;

/// The shared recording, locked (a panic on another thread does not stop the recording).
pub fn lock(cast: &Shared) -> std::sync::MutexGuard<'_, LiveCast> {
    cast.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A new shared recording into `path` for a `width`×`height` terminal.
pub fn shared(path: &Path, width: u16, height: u16, title: &str) -> io::Result<Shared> {
    Ok(std::sync::Arc::new(std::sync::Mutex::new(LiveCast::new(
        Cast::create(path, width, height, title)?,
    ))))
}

/// [`Tee`] over a shared recording: everything to `inner`, and at each flush to the cast
/// (with newlines as CR LF, as a terminal receives lines a program prints).
pub struct SharedTee<W: Write> {
    inner: W,
    pending: Vec<u8>,
    cast: Shared,
}

impl<W: Write> SharedTee<W> {
    /// Tee `inner` into `cast`.
    pub fn new(inner: W, cast: Shared) -> Self {
        SharedTee {
            inner,
            pending: Vec::new(),
            cast,
        }
    }
}

impl<W: Write> Write for SharedTee<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.pending.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()?;
        if !self.pending.is_empty() {
            let data = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            let mut c = lock(&self.cast);
            c.output(&data)?;
            c.flush()?;
        }
        Ok(())
    }
}

impl<W: Write> Drop for SharedTee<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// A playback shown through another sink (the terminal) and recorded as it goes: what is
/// shown, each command as typed, and a marker at each heading (a lesson's step).
pub struct RecordedSink<'a> {
    /// The sink that shows the playback.
    pub inner: &'a mut dyn PlaySink,
    /// The recording.
    pub cast: Shared,
    /// Paint the recording in colour.
    pub color: bool,
}

impl RecordedSink<'_> {
    fn emit(&mut self, data: &str) {
        let mut c = lock(&self.cast);
        let _ = c.output(data).and_then(|()| c.flush());
    }
}

impl PlaySink for RecordedSink<'_> {
    fn show(&mut self, out: &Outcome) {
        self.inner.show(out);
        let text = if self.color {
            ansi::paint(out)
        } else {
            out.to_text()
        };
        self.emit(&text);
    }

    fn marker(&mut self, label: &str) {
        self.inner.marker(label);
        let _ = lock(&self.cast).marker(label);
    }

    fn type_command(&mut self, command: &str, millis_per_char: u64) {
        self.inner.type_command(command, millis_per_char);
        let shown = lab_engine::render::escape_controls(command);
        self.emit(&format!("lab> {shown}\n"));
    }

    fn pause(&mut self, millis: u64) -> bool {
        self.inner.pause(millis)
    }

    fn wait_for_key(&mut self) -> bool {
        self.inner.wait_for_key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn newlines_become_crlf_once() {
        assert_eq!(to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
    }

    #[test]
    fn a_cast_reads_back_as_asciicast_v2() {
        let dir = std::env::temp_dir().join(format!("lab-cast-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.cast");
        let mut sink = CastSink::new(Cast::create(&path, 100, 30, "t").unwrap());
        sink.type_command("node list", 50);
        sink.pause(1500);
        let mut ok = Outcome::empty();
        ok.plain("ok");
        sink.show(&ok);
        sink.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let mut lines = text.lines();
        let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(header["version"], 2);
        assert_eq!(header["width"], 100);
        let events: Vec<Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(events[0], json!([0.0, "o", "lab> "]));
        assert_eq!(events[1], json!([0.05, "o", "n"]));
        let last = events.last().unwrap();
        assert_eq!(last[1], "o");
        // Nine characters at 50 ms, then a 1.5 s pause.
        assert!((last[0].as_f64().unwrap() - 1.95).abs() < 1e-9, "{last}");
        assert!(last[2].as_str().unwrap().contains("ok\r\n"), "{last}");
    }
}
