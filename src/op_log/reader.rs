//! Reading an op log back: its closed parts in order, then the journal's rows no part
//! holds (a killed run's), with one row held at a time beyond a batch of a row group's
//! columns. Exactly the parts the manifest lists are read, each checked against its
//! sha256 and row count first; a part that fails, is missing or is not listed, and a
//! journal record that fails its checks, are refused by name.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use parquet::column::reader::ColumnReaderImpl;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;

use super::journal::{self, JOURNAL, JournalDamage, JournalRow};
use super::manifest::{MANIFEST, Manifest, PartSum, sha256_of};
use super::names::{part_index, part_name, partial_name};
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
    /// Closed parts, in order, and what each must hold.
    parts: Vec<(PathBuf, PartSum)>,
    /// The journal, where it holds rows no closed part does.
    journal: Option<PathBuf>,
    /// The runs its rows may be of (the folder's own, or a merged folder's shards'):
    /// a row of another is another folder's log. Empty: not checked.
    runs: Vec<String>,
}

/// What reading a log found.
#[derive(Debug, Default, PartialEq)]
pub struct LogRead {
    pub rows: u64,
    /// Rows the kill cut as they were written: left out.
    pub cut: u64,
    /// Where the journal failed its checks, for the readers that stop there rather
    /// than fail (the rows after it are not in `rows`).
    pub damage: Option<String>,
    /// The most rows the damage may have taken.
    pub lost_at_most: u64,
}

impl LogRead {
    /// The read ended at the journal's damage `e`.
    fn stopped_at(&mut self, e: &anyhow::Error) {
        self.damage = Some(e.to_string());
        self.lost_at_most = e
            .downcast_ref::<JournalDamage>()
            .map_or(0, |damage| damage.rows_after_at_most);
    }
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

    /// The op log of the result folder `run_dir`: the parts its manifest lists, and
    /// its journal where that holds rows no part does.
    pub fn open(run_dir: &Path) -> Result<OpLog> {
        let dir = Self::dir_of(run_dir);
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
        let mut on_disk = BTreeMap::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
            if let Some(index) = part_index(&entry.file_name().to_string_lossy()) {
                on_disk.insert(index, entry.path());
            }
        }
        let manifest = Manifest::read(&dir)?.with_context(|| {
            format!(
                "{} has no list of its parts ({MANIFEST}): it was removed, or the log was \
                 written by an older hatshop, so its parts cannot be checked",
                dir.display()
            )
        })?;
        let last = manifest.next_part().checked_sub(1);
        let mut parts = Vec::new();
        for sum in manifest.parts.iter().cloned() {
            let path = match on_disk.remove(&sum.index) {
                Some(path) => path,
                // Listed, and the run killed before the part took its readable name.
                None if Some(sum.index) == last && dir.join(partial_name(sum.index)).is_file() => {
                    dir.join(partial_name(sum.index))
                }
                None => bail!(
                    "op log lost: {} is gone ({MANIFEST} lists it, with {} rows)",
                    dir.join(part_name(sum.index)).display(),
                    sum.rows
                ),
            };
            parts.push((path, sum));
        }
        if let Some(path) = on_disk.values().next() {
            bail!(
                "{} is not a part this run wrote: {MANIFEST} does not list it",
                path.display()
            );
        }
        let journal = dir.join(JOURNAL);
        let journal = if journal.exists() {
            match journal::open(&journal) {
                // A journal whose part was closed before the kill could empty it
                // holds only rows that part has.
                Ok((head, _)) => (head.next_part >= manifest.next_part()).then_some(journal),
                // Its damage is told where it is read.
                Err(e) if e.is::<JournalDamage>() => Some(journal),
                Err(e) => return Err(e),
            }
        } else if manifest.finished {
            None
        } else {
            bail!(
                "op log lost: {} is gone, and with it the rows after the log's {} closed \
                 part(s)",
                journal.display(),
                manifest.parts.len()
            );
        };
        Ok(OpLog {
            dir,
            parts,
            journal,
            runs: Vec::new(),
        })
    }

    /// The log, its every row to be of one of `runs`: the run.json's run id, or a
    /// merged folder's shards'. A row of any other run fails the read, by name.
    pub fn of_runs(mut self, runs: Vec<String>) -> OpLog {
        self.runs = runs;
        self
    }

    /// `visit`, behind the check that each row is of one of the log's runs.
    fn checked<'a>(
        &'a self,
        mut visit: impl FnMut(&RunOf, LoggedOp) -> Result<()> + 'a,
    ) -> impl FnMut(&RunOf, LoggedOp) -> Result<()> + 'a {
        let mut last_run: Option<String> = None;
        move |run: &RunOf, op: LoggedOp| {
            if !self.runs.is_empty() && last_run.as_deref() != Some(run.run_id.as_str()) {
                if !self.runs.contains(&run.run_id) {
                    bail!(
                        "{} holds rows of run {}, and its folder's run.json is of {}: it is \
                         another run's log",
                        self.dir.display(),
                        // Another folder's bytes: cut and escaped.
                        run.run_id
                            .chars()
                            .take(100)
                            .collect::<String>()
                            .escape_debug(),
                        self.runs.join(", ")
                    );
                }
                last_run = Some(run.run_id.clone());
            }
            visit(run, op)
        }
    }

    /// The folder it is in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The index the next closed part takes.
    pub fn next_part(&self) -> u32 {
        self.parts.last().map_or(0, |(_, sum)| sum.index + 1)
    }

    /// A part listed but never given its readable name (killed just before): the
    /// path it is at, and the one it takes.
    pub fn unnamed_part(&self) -> Option<(&Path, PathBuf)> {
        let (path, sum) = self.parts.last()?;
        let named = self.dir.join(part_name(sum.index));
        (*path != named).then_some((path.as_path(), named))
    }

    /// Whether its rows name their shard (a merged folder's log).
    pub fn has_shards(&self) -> Result<bool> {
        let Some((path, sum)) = self.parts.first() else {
            return Ok(false);
        };
        let reader = part_reader(path, sum)?;
        let schema = reader.metadata().file_metadata().schema_descr();
        Ok(schema.columns().iter().any(|c| c.name() == "shard"))
    }

    /// The rows it holds, and the cut ones left out: from the parts' footers (each
    /// part's first row checked to be of the log's runs), and a pass over the journal.
    pub fn count(&self) -> Result<LogRead> {
        let mut read = LogRead::default();
        let mut check = self.checked(|_, _| Ok(()));
        for (path, sum) in &self.parts {
            let reader = part_reader(path, sum)?;
            if let Some((run, op)) = first_row(path, &reader)? {
                check(&run, op)?;
            }
            read.rows += sum.rows;
        }
        if let Some(path) = &self.journal {
            let journal = self.read_journal(path, &mut check, false)?;
            read.rows += journal.rows;
            read.cut += journal.cut;
        }
        Ok(read)
    }

    /// Hands every row to `visit`, in the order written; stops at Ctrl-C.
    pub fn for_each(&self, visit: impl FnMut(&RunOf, LoggedOp) -> Result<()>) -> Result<LogRead> {
        self.read(visit, false)
    }

    /// As [`Self::for_each`], but a damaged journal ends the rows rather than failing,
    /// and the read says where: for `recover`, which keeps what it could read.
    pub fn for_each_until_damage(
        &self,
        visit: impl FnMut(&RunOf, LoggedOp) -> Result<()>,
    ) -> Result<LogRead> {
        self.read(visit, true)
    }

    fn read(
        &self,
        visit: impl FnMut(&RunOf, LoggedOp) -> Result<()>,
        stop_at_damage: bool,
    ) -> Result<LogRead> {
        let mut visit = self.checked(visit);
        let mut read = LogRead::default();
        for (path, sum) in &self.parts {
            read.rows += read_part(path, sum, &mut visit)?;
        }
        if let Some(path) = &self.journal {
            let journal = self.read_journal(path, &mut visit, stop_at_damage)?;
            read.rows += journal.rows;
            read.cut += journal.cut;
            read.damage = journal.damage;
            read.lost_at_most = journal.lost_at_most;
        }
        Ok(read)
    }

    /// Hands the journal's rows (those no closed part holds) to `visit`, up to any
    /// damage.
    pub fn for_each_journal_row(
        &self,
        visit: impl FnMut(&RunOf, LoggedOp) -> Result<()>,
    ) -> Result<LogRead> {
        let mut visit = self.checked(visit);
        match &self.journal {
            Some(path) => self.read_journal(path, &mut visit, true),
            None => Ok(LogRead::default()),
        }
    }

    /// The journal at `path` when it holds rows of its own.
    pub fn journal(&self) -> Option<&Path> {
        self.journal.as_deref()
    }

    fn read_journal(
        &self,
        path: &Path,
        visit: &mut dyn FnMut(&RunOf, LoggedOp) -> Result<()>,
        stop_at_damage: bool,
    ) -> Result<LogRead> {
        let mut read = LogRead::default();
        let (head, mut reader) = match journal::open(path) {
            Ok(opened) => opened,
            Err(e) if stop_at_damage && e.is::<JournalDamage>() => {
                read.stopped_at(&e);
                return Ok(read);
            }
            Err(e) => return Err(e),
        };
        let run = RunOf {
            run_id: head.run_id,
            database: head.database,
        };
        loop {
            let row = match reader.next() {
                Ok(row) => row,
                Err(e) if stop_at_damage && e.is::<JournalDamage>() => {
                    read.stopped_at(&e);
                    return Ok(read);
                }
                Err(e) => return Err(e),
            };
            match row {
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

/// The part at `path`, once its file hashes to what the manifest says and its footer
/// counts the rows listed.
fn part_reader(path: &Path, sum: &PartSum) -> Result<SerializedFileReader<File>> {
    let sha256 = sha256_of(path)?;
    if sha256 != sum.sha256 {
        bail!(
            "{} fails its checksum: it changed after the run wrote it (sha256 {sha256}, \
             {MANIFEST} says {})",
            path.display(),
            sum.sha256
        );
    }
    let file =
        crate::files::open_own(path).with_context(|| format!("cannot read {}", path.display()))?;
    let reader = SerializedFileReader::new(file)
        .with_context(|| format!("{} is not a valid Parquet file", path.display()))?;
    let rows = reader.metadata().file_metadata().num_rows();
    if u64::try_from(rows).ok() != Some(sum.rows) {
        bail!(
            "{} holds {rows} rows where {MANIFEST} lists {}",
            path.display(),
            sum.rows
        );
    }
    Ok(reader)
}

/// Rows decoded at a time: a row group holds up to 65,536, and its columns decoded whole
/// held some 20 MB at once (the report's slowest-5 % section, `export`, `merge` and
/// `recover` all read the log).
const BATCH_ROWS: usize = 4096;

/// Hands the rows of one part to `visit`; how many there were.
fn read_part(
    path: &Path,
    sum: &PartSum,
    visit: &mut dyn FnMut(&RunOf, LoggedOp) -> Result<()>,
) -> Result<u64> {
    let reader = part_reader(path, sum)?;
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

/// A part's first row and the run it is of, where it has one.
fn first_row(
    path: &Path,
    reader: &SerializedFileReader<File>,
) -> Result<Option<(RunOf, LoggedOp)>> {
    if reader.num_row_groups() == 0 || reader.metadata().file_metadata().num_rows() == 0 {
        return Ok(None);
    }
    let bad = || format!("{} is not an op log part", path.display());
    let group = reader.get_row_group(0).with_context(bad)?;
    let mut batch = Batch::open(group.as_ref()).with_context(bad)?;
    batch.read(1).with_context(bad)?;
    let run = RunOf {
        run_id: text(&batch.run_id[0]).to_string(),
        database: text(&batch.database[0]).to_string(),
    };
    Ok(Some((run, batch.row(0).with_context(bad)?)))
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
