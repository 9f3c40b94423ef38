//! What the engine asks of the world outside it, as traits the front ends implement: the
//! files a command names ([`Files`]: `cni conf load FILE`, `apply -f FILE`, `nad create
//! --file`, `save`/`load`, `--preset FILE`) and real mode's plugins
//! ([`crate::cni::real::RealCni`]). The engine itself never opens a file: a terminal front
//! end reads the disk, a browser build reads what the learner uploaded, and a lab given
//! neither ([`NoFiles`], the default) says that it reads no files.
//!
//! The caps every reader applies live here, so every front end refuses the same sizes.

/// The cap for configuration-sized files: conflists (`cni conf load`, `--conflist`),
/// presets (`--preset FILE`), lesson files and the lesson progress file. 1 MiB is over a
/// hundred times the largest real conflist or lesson, and small enough that a copy per
/// node on a 1,000-node preset stays bounded.
pub const CONFIG_CAP: u64 = 1 << 20;

/// The cap for scripts (`run FILE`) and save files (`load FILE`, `--load`): 16 MiB. A save
/// journals every command with the files it read, so it grows with a session; 16 MiB is
/// hundreds of thousands of commands, far past any lab session, and still a bounded read.
pub const SCRIPT_CAP: u64 = 16 << 20;

/// Everything the lab is given from outside: its files and, in real mode, the real
/// plugins. A lab replaced by `reset`, `load` or a lesson start keeps its edges.
#[derive(Clone)]
pub struct Edges {
    /// Where the files a command names are read and written.
    pub files: std::sync::Arc<dyn Files>,
    /// Real mode (`--real-cni`): every CNI execution is also made by the real plugin
    /// binary. `None`: the model alone.
    pub real: Option<std::sync::Arc<dyn crate::cni::real::RealCni>>,
}

impl Default for Edges {
    /// No files and no real mode: the model alone.
    fn default() -> Self {
        Edges {
            files: std::sync::Arc::new(NoFiles),
            real: None,
        }
    }
}

impl std::fmt::Debug for Edges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Edges")
            .field("real", &self.real.is_some())
            .finish_non_exhaustive()
    }
}

impl Edges {
    /// These files, no real mode.
    pub fn files(files: std::sync::Arc<dyn Files>) -> Self {
        Edges { files, real: None }
    }
}

/// Files as a command names them: read whole (at most a cap), written whole.
pub trait Files: Send + Sync {
    /// The bytes of the regular file `path`, at most `cap` of them; `what` names the file's
    /// role in the size message ("a conflist"). An error's text never repeats the path
    /// (callers prefix it): `not a regular file (a FIFO)`, `12582912 bytes is over the 1 MiB
    /// limit for a conflist`, or the I/O error as is.
    fn read(&self, path: &str, what: &str, cap: u64) -> std::io::Result<Vec<u8>>;
    /// Write `bytes` to `path` so that a failure leaves an existing file as it was.
    fn write(&self, path: &str, bytes: &[u8]) -> std::io::Result<()>;
}

/// A lab that reads and writes no files (the engine's default; a front end gives the lab
/// its own [`Files`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoFiles;

impl Files for NoFiles {
    fn read(&self, _: &str, _: &str, _: u64) -> std::io::Result<Vec<u8>> {
        Err(no_files())
    }

    fn write(&self, _: &str, _: &[u8]) -> std::io::Result<()> {
        Err(no_files())
    }
}

/// Files read through another [`Files`] but never written: what a preset runs with. A
/// preset builds a cluster; a `save` in one would write a file each time the lab starts
/// with it, so it is refused with [`PRESET_WRITES`].
pub(crate) struct ReadOnly(pub std::sync::Arc<dyn Files>);

/// Why a preset may not write a file.
pub(crate) const PRESET_WRITES: &str = "a preset builds a cluster and writes no files: `save` once the lab has started, or run the file as a script (`cni-csi-lab run FILE`)";

impl Files for ReadOnly {
    fn read(&self, path: &str, what: &str, cap: u64) -> std::io::Result<Vec<u8>> {
        self.0.read(path, what, cap)
    }

    fn write(&self, _: &str, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            PRESET_WRITES,
        ))
    }
}

fn no_files() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "this lab reads and writes no files (give the document inline: `apply -f - <<EOF`)",
    )
}

/// [`Files::read`] as UTF-8 text, a leading byte-order mark removed (editors on some
/// systems write one at the start of scripts, presets and conflists). Text that is not
/// UTF-8 is an `InvalidData` error, as `std::fs::read_to_string` reports it.
pub fn read_text(files: &dyn Files, path: &str, what: &str, cap: u64) -> std::io::Result<String> {
    let bytes = files.read(path, what, cap)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// A size for messages: `1 MiB`, `16 MiB`, `512 KiB`, `100 bytes`.
pub fn human_size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! The disk, for the engine's own tests that name fixture files.

    /// Reads and writes the disk with std::fs (tests only: the engine has no disk).
    pub struct Disk;

    /// Edges with the disk and no real mode.
    pub fn disk() -> super::Edges {
        super::Edges::files(std::sync::Arc::new(Disk))
    }

    impl super::Files for Disk {
        fn read(&self, path: &str, _: &str, cap: u64) -> std::io::Result<Vec<u8>> {
            let bytes = std::fs::read(path)?;
            if bytes.len() as u64 > cap {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(bytes)
        }

        fn write(&self, path: &str, bytes: &[u8]) -> std::io::Result<()> {
            std::fs::write(path, bytes)
        }
    }
}
