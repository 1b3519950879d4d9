//! Files written whole or not at all (`write_whole`), the names of the ledger directories
//! inside an output directory, the error of writing or reading results ([`OutputError`]), and
//! a file as a title shows it ([`shown_name`]).
//! Imports nothing of the crate: the checkpoint, the settings and every writer of results
//! stand on it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The ledger directory inside an output directory (a fleet's members).
pub const LEDGER_DIR: &str = "fleet";
/// The ledger directory of a run on one device on the wire (QEMU, serial, TCP).
pub const DEVICE_LEDGER_DIR: &str = "device-ledgers";

/// A file as a title shows it: its name without the directories (a title is no place for an
/// absolute path); the path as given if it has no name.
pub fn shown_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Writing results failed (the files of [`crate::run::output`]), or reading them back to redraw a
/// plot ([`crate::run::plot::replot`]).
#[derive(Debug)]
pub struct OutputError {
    /// The file or directory.
    pub path: PathBuf,
    /// What went wrong (for a file read back: where in it, and what to do).
    pub message: String,
    /// `true` when reading `path` failed, `false` when writing it did.
    pub reading: bool,
}

impl OutputError {
    /// Writing `path` failed.
    pub fn write(path: &Path, message: impl Into<String>) -> Self {
        Self { path: path.to_path_buf(), message: message.into(), reading: false }
    }

    /// Reading `path` failed; `message` says where in the file and what to do.
    pub fn read(path: &Path, message: impl Into<String>) -> Self {
        Self { path: path.to_path_buf(), message: message.into(), reading: true }
    }
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.reading {
            write!(f, "cannot read {}: {}", self.path.display(), self.message)
        } else {
            write!(f, "cannot write {}: {} (check the --out directory)", self.path.display(), self.message)
        }
    }
}

impl std::error::Error for OutputError {}

/// Writes `bytes` to `path` whole or not at all: into a partial file beside it, named for this
/// process and write (`NAME.<pid>-<n>.partial`, so no two writers share one), renamed over
/// `path` once complete. On any failure the partial file is removed.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_whole_with(path, bytes, false)
}

/// [`write_whole`], the partial file synced to the disk before it is renamed over `path`: a
/// power cut leaves `path` as it was or whole, never renamed and empty.
pub(crate) fn write_whole_synced(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_whole_with(path, bytes, true)
}

fn write_whole_with(path: &Path, bytes: &[u8], sync: bool) -> Result<(), OutputError> {
    static WRITES: AtomicUsize = AtomicUsize::new(0);
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}-{}{PARTIAL}", std::process::id(), WRITES.fetch_add(1, Ordering::Relaxed)));
    let partial = PathBuf::from(partial);
    let written = std::fs::File::create(&partial)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            if sync { file.sync_all() } else { Ok(()) }
        })
        .and_then(|()| std::fs::rename(&partial, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        OutputError::write(path, e.to_string())
    })
}

/// How the name of a file [`write_whole`] is writing ends.
const PARTIAL: &str = ".partial";

/// Removes the partial files in `dir` (see [`write_whole`]): a writer killed part-way leaves
/// one, and the next to hold the directory's lock removes it.
pub(crate) fn remove_partials(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.to_string_lossy().ends_with(PARTIAL) && path.is_file() {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}
