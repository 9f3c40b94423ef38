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
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} bytes is over the {} MiB limit for {what}",
                    bytes.len(),
                    cap >> 20
                ),
            ));
        }
        Ok(bytes.clone())
    }

    fn write(&self, path: &str, bytes: &[u8]) -> std::io::Result<()> {
        lock(&self.files).insert(path.to_string(), bytes.to_vec());
        lock(&self.written).push((path.to_string(), bytes.to_vec()));
        Ok(())
    }
}
