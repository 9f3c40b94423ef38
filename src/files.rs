//! The disk, for the engine (`Disk`, its `lab_engine::edge::Files`) and the front ends.
//!
//! Writing files so that a crash mid-write never leaves a half-written file: the bytes go to
//! a temporary file in the same directory, which is flushed to disk and then renamed over
//! the target (a rename within one directory is atomic on POSIX file systems).
//!
//! Reading files the lab is given (scripts, saves, presets, conflists, lessons, progress)
//! goes through [`read_capped`]: only a regular file, and only up to a size cap, so a FIFO,
//! a device such as `/dev/zero`, a directory or a growing file can neither hang the lab nor
//! exhaust its memory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporary files of concurrent writes within one process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary file a write of `target` uses: `.<name>.<pid>.<n>.tmp` beside it.
pub fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, fsync, then
/// rename over `path`. The directory is created if needed. On any error the temporary file
/// is removed and an existing `path` is left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)?;
    }
    write_in(dir.unwrap_or(Path::new(".")), path, bytes)
}

/// Write a file a command names (`save FILE`) atomically, as [`write_atomic`] does, but
/// create no directory: a missing one is refused as `cp` and a shell redirection refuse it
/// (`save /no-such-dir/x/../z.json` used to create `/no-such-dir/x`). The errors name the
/// real reason: the first directory of the path that does not exist (or is not a
/// directory), or a directory that takes no new files (`/proc`, `/sys`: creating a file
/// there fails with "No such file or directory" although the directory exists).
pub fn write_named(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::{Error, ErrorKind};
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut walked = PathBuf::new();
    for part in dir.components() {
        walked.push(part);
        match std::fs::metadata(&walked) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::new(
                    ErrorKind::NotADirectory,
                    format!("{} is not a directory", walked.display()),
                ));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!(
                        "the directory {} does not exist (the lab creates no directories: make it first)",
                        walked.display()
                    ),
                ));
            }
            Err(e) => return Err(Error::new(e.kind(), format!("{}: {e}", walked.display()))),
        }
    }
    if let Ok(m) = std::fs::symlink_metadata(path)
        && !m.is_file()
        && !m.file_type().is_symlink()
    {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{} is not a regular file ({})", path.display(), kind_of(&m)),
        ));
    }
    match write_in(dir, path, bytes) {
        Err(e) if e.kind() == ErrorKind::NotFound => Err(Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "the directory {} takes no new files (creating one there fails with \"{e}\" although the directory exists: a kernel file system such as /proc or /sys)",
                dir.display()
            ),
        )),
        r => r,
    }
}

/// The temporary file beside `path` in `dir`, fsync, rename over `path`; on an error the
/// temporary file is removed.
fn write_in(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    match result {
        Ok(()) => {
            // Make the rename itself durable (best effort: not every platform can open a
            // directory for syncing).
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Run `f` holding an exclusive advisory lock (`flock`) on `<target>.lock`, a file beside
/// `target` (created if needed, never removed: removing it would let two sessions lock
/// different files). Sessions that read-modify-write one file (lesson progress, REPL
/// history) take it around "re-read, merge, write atomically", so two sessions at once
/// do not lose each other's work. The lock is released when `f` returns (the file is
/// closed). Blocks while another session holds it; its holders only hold it for one write.
pub fn with_lock<T>(target: &Path, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut name = target
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "file".into());
    name.push(".lock");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(target.with_file_name(name))?;
    fs4::FileExt::lock(&lock)?;
    let result = f();
    // Closing the file releases the lock (also on a panic in `f`).
    drop(lock);
    result
}

pub use lab_engine::edge::{CONFIG_CAP, SCRIPT_CAP, human_size};

/// What kind of non-regular file the metadata describes, for "not a regular file (a FIFO)".
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    "not a plain file"
}

/// Open `path` for reading without blocking on a FIFO (a FIFO with no writer would
/// otherwise block `open` forever; the caller refuses it once it is open).
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o.open(path)
}

/// Read at most `cap` bytes of the regular file `path`. `what` names the file's role in
/// the size message ("a conflist", "a script"). Errors (their text never repeats the path,
/// so callers keep prefixing it as before):
/// - the file is not a regular file (checked on the opened handle, so a file swapped after
///   a check cannot slip through): `not a regular file (a FIFO)`, kind `InvalidInput`;
///   `/dev/null` by that name reads as empty;
/// - it is larger than `cap` (its length, or what a read produced for files such as
///   `/proc` ones whose length is 0): `12582912 bytes is over the 1 MiB limit for a
///   conflist`, kind `Other`; at most `cap + 1` bytes are ever read;
/// - opening or reading failed: the I/O error as is.
pub fn read_capped_bytes(path: &Path, what: &str, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind};
    if path == Path::new("/dev/null") {
        // The empty file by name (`run /dev/null` measures startup): a device, but one
        // that can neither hang nor exhaust the lab.
        return Ok(Vec::new());
    }
    let f = open_nonblocking(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind_of(&meta)),
        ));
    }
    let too_big = |len: u64| {
        Error::other(format!(
            "{len} bytes is over the {} limit for {what}",
            human_size(cap)
        ))
    };
    if meta.len() > cap {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    f.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_big(meta.len().max(bytes.len() as u64)));
    }
    Ok(bytes)
}

/// [`read_capped_bytes`] as UTF-8 text, a leading byte-order mark removed (see
/// [`lab_engine::edge::read_text`]).
pub fn read_capped(path: &Path, what: &str, cap: u64) -> std::io::Result<String> {
    lab_engine::edge::read_text(&Disk, &path.to_string_lossy(), what, cap)
}

/// The disk, as the engine reads and writes the files a command names
/// ([`lab_engine::edge::Files`]): [`read_capped_bytes`] and [`write_named`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl lab_engine::edge::Files for Disk {
    fn read(&self, path: &str, what: &str, cap: u64) -> std::io::Result<Vec<u8>> {
        read_capped_bytes(Path::new(path), what, cap)
    }

    fn write(&self, path: &str, bytes: &[u8]) -> std::io::Result<()> {
        write_named(Path::new(path), bytes)
    }
}

/// The disk for reading only: a graded replay (`cni-csi-lab grade` of a script) reads
/// the files its lines name and writes none (`save`, `lesson submit` fail in it).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOnlyDisk;

impl lab_engine::edge::Files for ReadOnlyDisk {
    fn read(&self, path: &str, what: &str, cap: u64) -> std::io::Result<Vec<u8>> {
        read_capped_bytes(Path::new(path), what, cap)
    }

    fn write(&self, path: &str, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{path}: a graded replay writes no file"),
        ))
    }
}

/// File names that complete `prefix` (`assets/ma` → `assets/manifests/`), sorted: a
/// directory ends in `/`; hidden entries only when the prefix names them. At most 200.
pub fn path_candidates(prefix: &str) -> Vec<String> {
    let (dir, file) = match prefix.rfind('/') {
        Some(i) => (&prefix[..=i], &prefix[i + 1..]),
        None => ("", prefix),
    };
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(file) || (name.starts_with('.') && !file.starts_with('.')) {
                return None;
            }
            let slash = if e.path().is_dir() { "/" } else { "" };
            Some(format!("{dir}{name}{slash}"))
        })
        .collect();
    out.sort();
    out.truncate(200);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lab-fs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn writes_replaces_and_leaves_no_temp_file() {
        let dir = scratch("ok");
        let f = dir.join("sub/out.json");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_cleans_up() {
        let dir = scratch("fail");
        std::fs::create_dir_all(&dir).unwrap();
        // The target is a directory: the rename fails, the temporary file is removed.
        let target = dir.join("taken");
        std::fs::create_dir_all(target.join("inner")).unwrap();
        assert!(write_atomic(&target, b"x").is_err());
        assert!(target.join("inner").is_dir());
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1, "only the directory itself: {names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn read_capped_refuses_what_is_not_a_small_regular_file() {
        let dir = scratch("capped");
        std::fs::create_dir_all(&dir).unwrap();
        let e = read_capped(&dir, "a script", SCRIPT_CAP).unwrap_err();
        assert!(
            e.to_string().contains("not a regular file (a directory)"),
            "{e}"
        );
        let e = read_capped(Path::new("/dev/zero"), "a script", SCRIPT_CAP).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let big = dir.join("big");
        std::fs::write(&big, vec![b'a'; 2049]).unwrap();
        let e = read_capped(&big, "a conflist", 2048).unwrap_err();
        assert_eq!(
            e.to_string(),
            "2049 bytes is over the 2 KiB limit for a conflist"
        );
        std::fs::write(&big, "\u{feff}echo hi\n").unwrap();
        assert_eq!(read_capped(&big, "a script", 2048).unwrap(), "echo hi\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(CONFIG_CAP), "1 MiB");
        assert_eq!(human_size(SCRIPT_CAP), "16 MiB");
        assert_eq!(human_size(1000), "1000 bytes");
    }
}
