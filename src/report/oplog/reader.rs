//! Reading an op log back: its closed parts in order, then the journal's rows no part
//! holds (a killed run's), with one row held at a time beyond a batch of a row group's
//! columns.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use parquet::column::reader::ColumnReaderImpl;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;

use super::journal::{self, JOURNAL, JournalRow};
use super::parts::part_index;
use super::{LoggedOp, OPS_DIR};
use crate::interrupt;

/// The run a row is of: the same for every row but in a merged folder's log.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunOf {
    pub run_id: String,
    pub database: String,
}

/// A result folder's op log.
pub struct OpLog {
    dir: PathBuf,
    /// Closed parts, in order.
    parts: Vec<PathBuf>,
    /// The journal, where it holds rows no closed part does.
    journal: Option<PathBuf>,
}

/// What reading a log found.
#[derive(Debug, Default, PartialEq)]
pub struct LogRead {
    pub rows: u64,
    /// Rows the kill cut as they were written: left out.
    pub cut: u64,
}

impl OpLog {
    /// The op log folder of the result folder `run_dir`.
    pub fn dir_of(run_dir: &Path) -> PathBuf {
        run_dir.join(OPS_DIR)
    }

    /// Whether `run_dir` has an op log.
    pub fn exists(run_dir: &Path) -> bool {
        Self::dir_of(run_dir).is_dir()
    }

    /// The op log of the result folder `run_dir`.
    pub fn open(run_dir: &Path) -> Result<OpLog> {
        let dir = Self::dir_of(run_dir);
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
        let mut parts = Vec::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
            if let Some(index) = part_index(&entry.file_name().to_string_lossy()) {
                parts.push((index, entry.path()));
            }
        }
        parts.sort();
        let journal = dir.join(JOURNAL);
        let journal = match journal.exists() {
            true => journal::open(&journal)?
                .filter(|(head, _)| parts.iter().all(|(index, _)| *index != head.next_part))
                .map(|_| journal),
            false => None,
        };
        Ok(OpLog {
            dir,
            parts: parts.into_iter().map(|(_, path)| path).collect(),
            journal,
        })
    }

    /// The folder it is in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether a journal holds rows no closed part does: the run was killed.
    pub fn has_journal(&self) -> bool {
        self.journal.is_some()
    }

    /// The index the next closed part takes.
    pub fn next_part(&self) -> u32 {
        self.parts
            .last()
            .and_then(|path| part_index(&path.file_name()?.to_string_lossy()))
            .map_or(0, |index| index + 1)
    }

    /// Whether its rows name their shard (a merged folder's log).
    pub fn has_shards(&self) -> Result<bool> {
        let Some(first) = self.parts.first() else {
            return Ok(false);
        };
        let reader = part_reader(first)?;
        let schema = reader.metadata().file_metadata().schema_descr();
        Ok(schema.columns().iter().any(|c| c.name() == "shard"))
    }

    /// The rows it holds, and the cut ones left out: from the parts' footers, and a
    /// pass over the journal.
    pub fn count(&self) -> Result<LogRead> {
        let mut read = LogRead::default();
        for part in &self.parts {
            read.rows += part_reader(part)?.metadata().file_metadata().num_rows() as u64;
        }
        if let Some(path) = &self.journal {
            let journal = self.read_journal(path, &mut |_, _| Ok(()))?;
            read.rows += journal.rows;
            read.cut += journal.cut;
        }
        Ok(read)
    }

    /// Hands every row to `visit`, in the order written; stops at Ctrl-C.
    pub fn for_each(
        &self,
        mut visit: impl FnMut(&RunOf, LoggedOp) -> Result<()>,
    ) -> Result<LogRead> {
        let mut read = LogRead::default();
        for part in &self.parts {
            read.rows += read_part(part, &mut visit)?;
        }
        if let Some(path) = &self.journal {
            let journal = self.read_journal(path, &mut visit)?;
            read.rows += journal.rows;
            read.cut += journal.cut;
        }
        Ok(read)
    }

    /// Hands the journal's rows (those no closed part holds) to `visit`.
    pub fn for_each_journal_row(
        &self,
        mut visit: impl FnMut(&RunOf, LoggedOp) -> Result<()>,
    ) -> Result<LogRead> {
        match &self.journal {
            Some(path) => self.read_journal(path, &mut visit),
            None => Ok(LogRead::default()),
        }
    }

    fn read_journal(
        &self,
        path: &Path,
        visit: &mut dyn FnMut(&RunOf, LoggedOp) -> Result<()>,
    ) -> Result<LogRead> {
        let mut read = LogRead::default();
        let Some((head, mut reader)) = journal::open(path)? else {
            return Ok(read);
        };
        let run = RunOf {
            run_id: head.run_id,
            database: head.database,
        };
        loop {
            match reader.next()? {
                JournalRow::Row(op) => {
                    if read.rows.is_multiple_of(4096) && interrupt::requested() {
                        bail!("interrupted");
                    }
                    visit(&run, op)?;
                    read.rows += 1;
                }
                JournalRow::Cut => {
                    read.cut = 1;
                    return Ok(read);
                }
                JournalRow::End => return Ok(read),
            }
        }
    }
}

fn part_reader(path: &Path) -> Result<SerializedFileReader<File>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    SerializedFileReader::new(file)
        .with_context(|| format!("{} is not a valid Parquet file", path.display()))
}

/// Rows decoded at a time: a row group holds up to 65,536, and its columns decoded whole
/// held some 20 MB at once (the report's slowest-5 % section, `export`, `merge` and
/// `recover` all read the log).
const BATCH_ROWS: usize = 4096;

/// Hands the rows of one part to `visit`; how many there were.
fn read_part(path: &Path, visit: &mut dyn FnMut(&RunOf, LoggedOp) -> Result<()>) -> Result<u64> {
    let reader = part_reader(path)?;
    let bad = || format!("{} is not an op log part", path.display());
    let mut rows = 0u64;
    let mut run = RunOf::default();
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).with_context(bad)?;
        let group_rows = group.metadata().num_rows() as usize;
        let mut batch = Batch::open(group.as_ref()).with_context(bad)?;
        let mut done = 0;
        while done < group_rows {
            if interrupt::requested() {
                bail!("interrupted");
            }
            let size = BATCH_ROWS.min(group_rows - done);
            batch.read(size).with_context(bad)?;
            for i in 0..size {
                let (run_id, database) = (text(&batch.run_id[i]), text(&batch.database[i]));
                if run.run_id != run_id || run.database != database {
                    run = RunOf {
                        run_id: run_id.to_string(),
                        database: database.to_string(),
                    };
                }
                let op = batch.row(i).with_context(bad)?;
                visit(&run, op)?;
                rows += 1;
            }
            done += size;
        }
    }
    Ok(rows)
}

fn text(value: &Option<ByteArray>) -> &str {
    value.as_ref().and_then(|v| v.as_utf8().ok()).unwrap_or("")
}

/// A row group's columns, read a batch of rows at a time: each column's values (or
/// none) for the rows of the batch.
struct Batch {
    run_id: Column<ByteArrayType>,
    database: Column<ByteArrayType>,
    event_type: Column<ByteArrayType>,
    seq: Column<Int64Type>,
    target: Column<Int64Type>,
    timestamp: Column<Int64Type>,
    latency_ns: Column<Int64Type>,
    success: Column<BoolType>,
    error_kind: Column<ByteArrayType>,
    error: Column<ByteArrayType>,
    node: Column<Int32Type>,
    attempts: Column<Int32Type>,
    error_code: Column<ByteArrayType>,
    intended_start: Column<Int64Type>,
    queue_ns: Column<Int64Type>,
    /// Empty where the log has no `shard` column (it is not a merge's).
    shard: Column<Int32Type>,
}

impl Batch {
    fn open(group: &dyn RowGroupReader) -> Result<Batch> {
        Ok(Batch {
            run_id: Column::open(group, "run_id")?,
            database: Column::open(group, "database")?,
            event_type: Column::open(group, "event_type")?,
            seq: Column::open(group, "seq")?,
            target: Column::open(group, "target")?,
            timestamp: Column::open(group, "timestamp")?,
            latency_ns: Column::open(group, "latency_ns")?,
            success: Column::open(group, "success")?,
            error_kind: Column::open(group, "error_kind")?,
            error: Column::open(group, "error")?,
            node: Column::open(group, "node")?,
            attempts: Column::open(group, "attempts")?,
            error_code: Column::open(group, "error_code")?,
            intended_start: Column::open(group, "intended_start")?,
            queue_ns: Column::open(group, "queue_ns")?,
            shard: Column::open_if_there(group, "shard")?,
        })
    }

    /// The next `rows` rows of every column.
    fn read(&mut self, rows: usize) -> Result<()> {
        self.run_id.read(rows)?;
        self.database.read(rows)?;
        self.event_type.read(rows)?;
        self.seq.read(rows)?;
        self.target.read(rows)?;
        self.timestamp.read(rows)?;
        self.latency_ns.read(rows)?;
        self.success.read(rows)?;
        self.error_kind.read(rows)?;
        self.error.read(rows)?;
        self.node.read(rows)?;
        self.attempts.read(rows)?;
        self.error_code.read(rows)?;
        self.intended_start.read(rows)?;
        self.queue_ns.read(rows)?;
        self.shard.read(rows)
    }

    fn row(&self, i: usize) -> Result<LoggedOp> {
        let required = |value: Option<i64>, name: &str| {
            value
                .map(|v| v as u64)
                .ok_or_else(|| anyhow!("row {i} has no {name}"))
        };
        let event_type = super::event_type(text(&self.event_type[i]))?.as_str();
        let error = match self.success[i] {
            Some(false) => Some((
                super::error_kind(text(&self.error_kind[i])),
                text(&self.error[i]).to_string(),
            )),
            _ => None,
        };
        Ok(LoggedOp {
            event_type,
            seq: required(self.seq[i], "seq")?,
            target: required(self.target[i], "target")?,
            sent_ns: required(self.timestamp[i], "timestamp")?,
            latency_ns: required(self.latency_ns[i], "latency_ns")?,
            error,
            error_code: self.error_code[i]
                .as_ref()
                .map(|_| text(&self.error_code[i]).to_string()),
            node: self.node[i].map_or(0, |n| n as u16),
            attempts: self.attempts[i].map_or(1, |n| n as u32),
            intended_start_ns: self.intended_start[i].map(|ns| ns as u64),
            queue_ns: self.queue_ns[i].map(|ns| ns as u64),
            shard: self.shard.batch.get(i).copied().flatten().map(|s| s as u32),
        })
    }
}

/// One column of a row group, read a batch at a time; its values index like `Vec`s.
struct Column<T: DataType> {
    name: &'static str,
    /// `None`: the group has no such column (only `shard` may be missing).
    reader: Option<ColumnReaderImpl<T>>,
    optional: bool,
    values: Vec<T::T>,
    defined: Vec<i16>,
    batch: Vec<Option<T::T>>,
}

impl<T: DataType> Column<T> {
    fn open(group: &dyn RowGroupReader, name: &'static str) -> Result<Column<T>> {
        let column = Self::open_if_there(group, name)?;
        if column.reader.is_none() {
            bail!("it has no column {name}");
        }
        Ok(column)
    }

    fn open_if_there(group: &dyn RowGroupReader, name: &'static str) -> Result<Column<T>> {
        let schema = group.metadata().schema_descr();
        let mut column = Column {
            name,
            reader: None,
            optional: false,
            values: Vec::new(),
            defined: Vec::new(),
            batch: Vec::new(),
        };
        if let Some(i) = schema.columns().iter().position(|c| c.name() == name) {
            column.optional = schema.column(i).max_def_level() > 0;
            column.reader = Some(
                T::get_column_reader(group.get_column_reader(i)?)
                    .ok_or_else(|| anyhow!("its column {name} has another type"))?,
            );
        }
        Ok(column)
    }

    /// The column's next `rows` values, or none where there is no such column.
    fn read(&mut self, rows: usize) -> Result<()> {
        let name = self.name;
        self.batch.clear();
        let Some(reader) = &mut self.reader else {
            return Ok(());
        };
        self.values.clear();
        self.defined.clear();
        let mut read = 0;
        while read < rows {
            let (records, _, _) = reader.read_records(
                rows - read,
                Some(&mut self.defined),
                None,
                &mut self.values,
            )?;
            if records == 0 {
                bail!("its column {name} ends early");
            }
            read += records;
        }
        let mut present = self.values.drain(..);
        if self.optional {
            let defined = self.defined.iter();
            self.batch
                .extend(defined.map(|&level| if level > 0 { present.next() } else { None }));
        } else {
            self.batch.extend(present.map(Some));
        }
        Ok(())
    }
}

impl<T: DataType> std::ops::Index<usize> for Column<T> {
    type Output = Option<T::T>;

    fn index(&self, i: usize) -> &Option<T::T> {
        &self.batch[i]
    }
}
