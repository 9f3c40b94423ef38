//! The files a command names, in a browser: what the learner uploaded (the page's Files
//! button), read by name; a file a command writes (`save`, `lesson submit`) is kept and
//! handed to the page to download.

use lab_engine::edge::Files;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Uploaded files by name, and the files written since the page last looked.
#[derive(Debug, Default)]
pub(crate) struct Uploads {
    files: Mutex<BTreeMap<String, Vec<u8>>>,
    written: Mutex<Vec<(String, Vec<u8>)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Uploads {
    /// A shared, empty set.
    pub(crate) fn shared() -> Arc<Uploads> {
        Arc::new(Uploads::default())
    }

    /// Keep an uploaded file under its name (a file of that name is replaced).
    pub(crate) fn upload(&self, name: &str, bytes: Vec<u8>) {
        lock(&self.files).insert(name.to_string(), bytes);
    }

    /// The names that start with `prefix`, sorted.
    pub(crate) fn names(&self, prefix: &str) -> Vec<String> {
        lock(&self.files)
            .keys()
            .filter(|n| n.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// The files written since the last call, in order.
    pub(crate) fn take_written(&self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut *lock(&self.written))
    }
}

impl Files for Uploads {
    fn read(&self, path: &str, what: &str, cap: u64) -> std::io::Result<Vec<u8>> {
        let files = lock(&self.files);
        let bytes = files.get(path).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no uploaded file of that name: upload it with the Files button, or give the document inline (`apply -f - <<EOF`)",
            )
        })?;
        if bytes.len() as u64 > cap {
            // As the disk says it (`files::read_capped_bytes`).
            return Err(std::io::Error::other(format!(
                "{} bytes is over the {} limit for {what}",
                bytes.len(),
                lab_engine::edge::human_size(cap)
            )));
        }
        Ok(bytes.clone())
    }

    fn write(&self, path: &str, bytes: &[u8]) -> std::io::Result<()> {
        lock(&self.files).insert(path.to_string(), bytes.to_vec());
        lock(&self.written).push((path.to_string(), bytes.to_vec()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_engine::edge::CONFIG_CAP;

    #[test]
    fn a_command_reads_what_was_uploaded_and_nothing_else() {
        let u = Uploads::shared();
        u.upload("net.conflist", b"{}".to_vec());
        assert_eq!(
            u.read("net.conflist", "a conflist", CONFIG_CAP).unwrap(),
            b"{}"
        );
        let e = u
            .read("other.conflist", "a conflist", CONFIG_CAP)
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        assert!(
            e.to_string().contains("upload it with the Files button"),
            "{e}"
        );
        u.upload("big.conflist", vec![b' '; 2049]);
        let e = u.read("big.conflist", "a conflist", 2048).unwrap_err();
        assert_eq!(
            e.to_string(),
            "2049 bytes is over the 2 KiB limit for a conflist"
        );
    }

    #[test]
    fn a_written_file_is_kept_and_handed_over_once() {
        let u = Uploads::shared();
        u.write("submission.json", b"[1]").unwrap();
        assert_eq!(u.read("submission.json", "x", CONFIG_CAP).unwrap(), b"[1]");
        assert_eq!(
            u.take_written(),
            [("submission.json".to_string(), b"[1]".to_vec())]
        );
        assert!(u.take_written().is_empty());
        assert_eq!(u.names("sub"), ["submission.json"]);
        assert!(u.names("x").is_empty());
    }
}
