//! JSON and CSV files, as every result folder holds them: JSON pretty-printed, CSV with
//! a header taken from the row type's fields (so the header cannot drift from the
//! data), and the path named in every error.

use std::fs::File;
use std::io::Write as _;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

/// Writes `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("result records serialise");
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
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
/// there are no rows.
pub fn write_csv<T: Serialize + Default>(path: &Path, rows: &[T]) -> Result<()> {
    let mut out = CsvRows::create(path)?;
    for row in rows {
        out.push(row)?;
    }
    out.finish()
}

/// A CSV of `T` rows written as they come, so that none need be held: its header is
/// there even when no row follows.
pub struct CsvRows<T> {
    csv: csv::Writer<File>,
    path: PathBuf,
    row: PhantomData<T>,
}

impl<T: Serialize + Default> CsvRows<T> {
    /// Creates the file with its header row, from the row type's fields.
    pub fn create(path: &Path) -> Result<Self> {
        let cannot = || format!("cannot write {}", path.display());
        let mut file = File::create(path).with_context(cannot)?;
        file.write_all(csv_header(&T::default()).as_bytes())
            .with_context(cannot)?;
        Ok(CsvRows {
            csv: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(file),
            path: path.to_path_buf(),
            row: PhantomData,
        })
    }

    /// Appends one row.
    pub fn push(&mut self, row: &T) -> Result<()> {
        self.csv
            .serialize(row)
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// Writes what is buffered; an error says which file.
    pub fn finish(mut self) -> Result<()> {
        self.csv
            .flush()
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// Reads JSON written by [`write_json`].
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid", path.display()))
}
