//! JSON and CSV files, as every result folder holds them: JSON pretty-printed, CSV with
//! a header taken from the row type's fields (so the header cannot drift from the
//! data), and the path named in every error.
//!
//! Every file is written whole or not at all: into a temporary file beside it, synced,
//! then renamed over the old one. A full disk or a kill mid-write leaves the previous
//! version (or no file), never a cut one that a reader would refuse. The one exception
//! is the op log, which grows while a run goes so that a killed run keeps its rows.
//! Room is kept for a run's last records ([`Reserve`]), a command that fails part-way
//! puts the files it changed back ([`Rollback`]), and files outside hatshop's folders
//! are written through, never replaced ([`write_out`]).

mod bounded;
mod outside;
mod reserve;
mod rollback;

pub use crate::regular_file::{
    RESULT_FILE_LIMIT, SETTINGS_FILE_LIMIT, open_own, read_bounded, read_bounded_text, read_own,
};
pub use bounded::read_settings_file;
pub use outside::{
    OutStream, RUN_RECORD, check_out, closed_pipe, is_plain_file, refuse_result_file, write_out,
};
pub use reserve::Reserve;
pub use rollback::Rollback;

use std::fs::File;
use std::io::Write as _;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::Serialize;

/// Writes `bytes` to `path` atomically: a failed write leaves the previous version,
/// and its one-line error says so.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut part = Part::create(path)?;
    part.file
        .write_all(bytes)
        .map_err(|e| part.failed(e.into()))?;
    part.commit()
}

/// Writes `value` as pretty JSON to `path`, atomically.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("result records serialise");
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

/// A file being written under a temporary name beside its final one; dropped
/// without [`Part::commit`], it is removed and the final file is left as it was.
pub struct Part {
    file: File,
    temporary: PathBuf,
    path: PathBuf,
    committed: bool,
}

impl Part {
    fn create(path: &Path) -> Result<Part> {
        let name = path
            .file_name()
            .map_or_else(|| "file".into(), |name| name.to_string_lossy().into_owned());
        // Unique in the process too: two threads may write the same file (a report
        // on a second signal while the run writes its own).
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temporary = path.with_file_name(format!(".{name}.{}-{n}.part", std::process::id()));
        let file = File::create(&temporary).map_err(|e| cannot_write(path, e.into()))?;
        Ok(Part {
            file,
            temporary,
            path: path.to_path_buf(),
            committed: false,
        })
    }

    /// The error of a failed write, in one line that says what was kept.
    fn failed(&self, error: anyhow::Error) -> anyhow::Error {
        cannot_write(&self.path, error)
    }

    /// Syncs the data and puts the file in place of the old one.
    fn commit(mut self) -> Result<()> {
        self.file.sync_all().map_err(|e| self.failed(e.into()))?;
        std::fs::rename(&self.temporary, &self.path).map_err(|e| self.failed(e.into()))?;
        self.committed = true;
        // The rename itself lasts a power cut only once the folder is synced.
        if let Some(folder) = self.path.parent()
            && let Ok(folder) = File::open(if folder.as_os_str().is_empty() {
                Path::new(".")
            } else {
                folder
            })
        {
            let _ = folder.sync_all();
        }
        Ok(())
    }
}

impl Drop for Part {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

/// "cannot write PATH: ERROR; the previous PATH is kept" (or "nothing was written").
fn cannot_write(path: &Path, error: anyhow::Error) -> anyhow::Error {
    let kept = if path.exists() {
        "its previous version is kept"
    } else {
        "nothing was written"
    };
    anyhow!("cannot write {}: {error:#}; {kept}", path.display())
}

/// The header line of a CSV of `T` rows (from its field names), newline included.
pub fn csv_header<T: Serialize>(sample: &T) -> String {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.serialize(sample).expect("rows serialise");
    let bytes = csv.into_inner().expect("in memory");
    let text = String::from_utf8(bytes).expect("CSV is text");
    text.lines().next().unwrap_or_default().to_string() + "\n"
}

/// Writes rows of a `#[derive(Serialize)]` struct as CSV with a header, also when
/// there are no rows, atomically.
pub fn write_csv<T: Serialize + Default>(path: &Path, rows: &[T]) -> Result<()> {
    let mut out = CsvRows::create(path)?;
    for row in rows {
        out.push(row)?;
    }
    out.finish()
}

/// A CSV of `T` rows written as they come, so that none need be held: its header is
/// there even when no row follows. It takes the place of the old file at
/// [`CsvRows::finish`]; dropped before, it leaves the old file as it was.
pub struct CsvRows<T> {
    csv: csv::Writer<Part>,
    path: PathBuf,
    row: PhantomData<T>,
}

impl<T: Serialize + Default> CsvRows<T> {
    /// Starts the file with its header row, from the row type's fields.
    pub fn create(path: &Path) -> Result<Self> {
        let mut part = Part::create(path)?;
        part.file
            .write_all(csv_header(&T::default()).as_bytes())
            .map_err(|e| part.failed(e.into()))?;
        Ok(CsvRows {
            csv: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(part),
            path: path.to_path_buf(),
            row: PhantomData,
        })
    }

    /// Appends one row.
    pub fn push(&mut self, row: &T) -> Result<()> {
        self.csv
            .serialize(row)
            .map_err(|e| cannot_write(&self.path, e.into()))
    }

    /// Writes what is buffered and puts the file in place; an error says which file.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        self.csv
            .into_inner()
            .map_err(|e| cannot_write(&path, anyhow!("{}", e.error())))?
            .commit()
    }
}

impl std::io::Write for Part {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.file.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Reads JSON written by [`write_json`].
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = read_own(path, RESULT_FILE_LIMIT)
        .with_context(|| format!("cannot read {}", path.display()))?;
    parse_json(path, &bytes)
}

/// JSON read from `path`, parsed.
pub fn parse_json<T: serde::de::DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).with_context(|| format!("{} is not valid", path.display()))
}
