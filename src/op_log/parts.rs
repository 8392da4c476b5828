//! The op log's Parquet parts: `part-N.parquet`, each closed (its footer written) after
//! [`GROUPS_PER_PART`] row groups, and written meanwhile as `_part-N.partial`, so that
//! no reader ever sees a part without its footer. A part is listed in the manifest
//! (`_parts`, with its rows and sha256) before it takes its readable name.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::LoggedOp;
use super::columns::{self, Columns, GROUP_ROWS};
use super::manifest::{Hashed, Manifest, PartSum};
use super::names::{part_name, partial_name};

/// Row groups in a part: about a million rows, some 5 MB on disk.
pub const GROUPS_PER_PART: usize = 16;

/// Writes rows into parts, from part `first` on.
pub struct PartWriter {
    dir: PathBuf,
    schema: Arc<Type>,
    properties: Arc<WriterProperties>,
    /// The part being written, and the row groups it holds.
    open: Option<(SerializedFileWriter<BufWriter<Hashed<File>>>, usize)>,
    /// The parts closed, these and any before `first`.
    manifest: Manifest,
    /// The index of the open part, or of the next one.
    next: u32,
    first: u32,
    columns: Columns,
    /// Rows per row group and row groups per part.
    sizes: (usize, usize),
}

impl PartWriter {
    /// Parts in `dir` (made if need be) from index `first` on, with a `shard` column if
    /// `shards`, of the run `run_id` against `database` until [`Self::set_run`]. From 0
    /// it starts the manifest; past 0 it goes on with the one the parts before left.
    pub fn create(
        dir: &Path,
        first: u32,
        shards: bool,
        run_id: &str,
        database: &str,
    ) -> Result<PartWriter> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let manifest = match first {
            0 => Manifest::default(),
            _ => Manifest::read(dir)?
                .filter(|m| m.next_part() == first)
                .with_context(|| {
                    format!("{} does not list the parts before this one", dir.display())
                })?,
        };
        manifest.write(dir)?;
        Ok(PartWriter {
            dir: dir.to_path_buf(),
            schema: columns::schema(shards)?,
            properties: columns::properties(),
            open: None,
            manifest,
            next: first,
            first,
            columns: Columns::new(run_id, database),
            sizes: (GROUP_ROWS, GROUPS_PER_PART),
        })
    }

    /// Parts of `groups` row groups of `rows` rows: small ones, for tests.
    #[cfg(test)]
    pub fn sized(mut self, rows: usize, groups: usize) -> PartWriter {
        self.sizes = (rows, groups);
        self
    }

    /// Names the run the next rows are of (a merge's next shard).
    pub fn set_run(&mut self, run_id: &str, database: &str) {
        self.columns.set_run(run_id, database);
    }

    /// The index of the part the next row goes into.
    pub fn next_part(&self) -> u32 {
        self.next
    }

    /// Adds a row; true when it closed a part, so that every row so far is in parts.
    pub fn push(&mut self, op: &LoggedOp) -> Result<bool> {
        self.columns.push(op);
        if self.columns.len() < self.sizes.0 {
            return Ok(false);
        }
        let groups = self.write_group()?;
        if groups < self.sizes.1 {
            return Ok(false);
        }
        self.close_part()?;
        Ok(true)
    }

    /// Writes the rows held, closes the part and marks the manifest finished. A log
    /// with no part at all gets an empty one, so that readers find its columns.
    pub fn finish(mut self) -> Result<()> {
        if self.columns.len() > 0
            || (self.open.is_none() && self.next == self.first && self.first == 0)
        {
            self.write_group()?;
        }
        if self.open.is_some() {
            self.close_part()?;
        }
        self.manifest.finished = true;
        self.manifest.write(&self.dir)
    }

    /// Writes the rows held as a row group of the open part (opened if need be); the
    /// row groups it now holds.
    fn write_group(&mut self) -> Result<usize> {
        if self.open.is_none() {
            let path = self.dir.join(partial_name(self.next));
            let file =
                File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
            let writer = SerializedFileWriter::new(
                BufWriter::new(Hashed::new(file)),
                self.schema.clone(),
                self.properties.clone(),
            )?;
            self.open = Some((writer, 0));
        }
        let partial = self.dir.join(partial_name(self.next));
        let (writer, groups) = self.open.as_mut().expect("opened above");
        if self.columns.len() > 0 {
            let columns = &mut self.columns;
            (|| -> Result<()> {
                let mut group = writer.next_row_group()?;
                columns.write(&mut group)?;
                group.close()?;
                Ok(())
            })()
            .with_context(|| format!("cannot write {}", partial.display()))?;
            *groups += 1;
        }
        Ok(*groups)
    }

    /// Writes the open part's footer, lists it in the manifest with its rows and hash,
    /// and gives it its readable name.
    fn close_part(&mut self) -> Result<()> {
        let Some((writer, _)) = self.open.take() else {
            return Ok(());
        };
        let partial = self.dir.join(partial_name(self.next));
        let cannot = || format!("cannot write {}", partial.display());
        let rows = writer
            .flushed_row_groups()
            .iter()
            .map(|group| group.num_rows() as u64)
            .sum();
        // Writes the footer.
        let buffered = writer.into_inner().with_context(cannot)?;
        let (file, sha256) = buffered
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(cannot)?
            .finish();
        // Listed only once it is on the disk: the manifest outlasts a power cut too.
        file.sync_all().with_context(cannot)?;
        self.manifest.parts.push(PartSum {
            index: self.next,
            rows,
            sha256,
        });
        self.manifest.write(&self.dir)?;
        let closed = self.dir.join(part_name(self.next));
        std::fs::rename(&partial, &closed).with_context(cannot)?;
        self.next += 1;
        Ok(())
    }
}
