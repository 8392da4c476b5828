//! The op log's Parquet schema and one row group's columns, gathered row by row and
//! written column by column.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedRowGroupWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::{ColumnPath, Type};

use super::LoggedOp;

/// Rows in a row group: about 4 MB of columns held before they are written.
pub const GROUP_ROWS: usize = 65_536;

/// The columns, in file order; `shard` only in a merged folder's log. Times are
/// timestamps in ns (UTC); `latency_ns` and `queue_ns` are durations in ns.
const SCHEMA: &str = "message op {
    required binary run_id (STRING);
    required binary database (STRING);
    required binary event_type (STRING);
    required int64 seq;
    required int64 target;
    required int64 timestamp (TIMESTAMP(NANOS,true));
    required int64 latency_ns;
    required boolean success;
    optional binary error_kind (STRING);
    optional binary error (STRING);
    optional int32 node;
    required int32 attempts;
    optional binary error_code (STRING);
    optional int64 intended_start (TIMESTAMP(NANOS,true));
    optional int64 queue_ns;
}";

/// The columns whose values follow one another closely (counters, clocks) or spread
/// widely (latencies): delta-encoded, they take a few bits a row with no compression
/// library and little CPU. The rest repeat a few values and are dictionary-encoded.
const DELTA_COLUMNS: &[&str] = &[
    "seq",
    "target",
    "timestamp",
    "latency_ns",
    "intended_start",
    "queue_ns",
];

/// The columns that name the run and the database: one value a run, so their minimum and
/// maximum (which cost a comparison a row) tell a reader nothing its dictionary does not.
const CONSTANT_COLUMNS: &[&str] = &["run_id", "database"];

/// The schema, with a `shard` column for a merged folder.
pub fn schema(shards: bool) -> Result<Arc<Type>> {
    let text = if shards {
        SCHEMA.replace('}', "    required int32 shard;\n}")
    } else {
        SCHEMA.to_string()
    };
    Ok(Arc::new(
        parse_message_type(&text).context("the op log's schema")?,
    ))
}

/// How parts are written: see [`DELTA_COLUMNS`] and [`CONSTANT_COLUMNS`].
pub fn properties() -> Arc<WriterProperties> {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        .set_created_by(format!("hatshop {}", env!("CARGO_PKG_VERSION")))
        .set_max_row_group_row_count(Some(GROUP_ROWS));
    for name in DELTA_COLUMNS {
        builder = builder
            .set_column_dictionary_enabled(ColumnPath::from(*name), false)
            .set_column_encoding(ColumnPath::from(*name), Encoding::DELTA_BINARY_PACKED);
    }
    for name in CONSTANT_COLUMNS {
        builder =
            builder.set_column_statistics_enabled(ColumnPath::from(*name), EnabledStatistics::None);
    }
    Arc::new(builder.build())
}

/// Values of an optional column: the present ones, and a definition level per row.
#[derive(Default)]
struct Optional<T> {
    values: Vec<T>,
    defined: Vec<i16>,
}

impl<T> Optional<T> {
    fn push(&mut self, value: Option<T>) {
        self.defined.push(i16::from(value.is_some()));
        self.values.extend(value);
    }

    fn clear(&mut self) {
        self.values.clear();
        self.defined.clear();
    }
}

/// Consecutive rows of one run, against one database: a merged log's row group may hold
/// several runs, a run's log one. The two columns are written from a few copies of each
/// value rather than one per row.
struct RunRows {
    run_id: ByteArray,
    database: ByteArray,
    rows: usize,
}

impl RunRows {
    fn new(run_id: &str, database: &str) -> RunRows {
        RunRows {
            run_id: run_id.into(),
            database: database.into(),
            rows: 0,
        }
    }
}

/// Copies of a run's names handed to the column writer at a time.
const COPIES: usize = 4096;

/// One row group's columns.
#[derive(Default)]
pub struct Columns {
    /// The runs the rows are of, in order; the last is the one rows are added to.
    runs: Vec<RunRows>,
    event_type: Vec<ByteArray>,
    seq: Vec<i64>,
    target: Vec<i64>,
    timestamp: Vec<i64>,
    latency_ns: Vec<i64>,
    success: Vec<bool>,
    error_kind: Optional<ByteArray>,
    error: Optional<ByteArray>,
    node: Optional<i32>,
    attempts: Vec<i32>,
    error_code: Optional<ByteArray>,
    intended_start: Optional<i64>,
    queue_ns: Optional<i64>,
    shard: Vec<i32>,
}

impl Columns {
    /// Columns for rows of the run `run_id` against `database`, until [`Self::set_run`].
    pub fn new(run_id: &str, database: &str) -> Columns {
        Columns {
            runs: vec![RunRows::new(run_id, database)],
            ..Columns::default()
        }
    }

    /// Names the run the next rows are of (a merge's next shard).
    pub fn set_run(&mut self, run_id: &str, database: &str) {
        let last = self.runs.last_mut().expect("a run is always named");
        if last.run_id.as_utf8().ok() == Some(run_id)
            && last.database.as_utf8().ok() == Some(database)
        {
            return;
        }
        let next = RunRows::new(run_id, database);
        if last.rows == 0 {
            *last = next;
        } else {
            self.runs.push(next);
        }
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.seq.len()
    }

    /// Adds `op`, of the run last named.
    pub fn push(&mut self, op: &LoggedOp) {
        self.runs.last_mut().expect("a run is always named").rows += 1;
        self.event_type.push(name(op.event_type));
        self.seq.push(op.seq as i64);
        self.target.push(op.target as i64);
        self.timestamp.push(op.sent_ns as i64);
        self.latency_ns.push(op.latency_ns as i64);
        self.success.push(op.error.is_none());
        self.error_kind
            .push(op.error.as_ref().map(|(kind, _)| name(kind)));
        self.error.push(
            op.error
                .as_ref()
                .map(|(_, message)| message.as_str().into()),
        );
        self.node.push((op.node > 0).then_some(i32::from(op.node)));
        self.attempts.push(op.attempts as i32);
        self.error_code
            .push(op.error_code.as_deref().map(ByteArray::from));
        self.intended_start
            .push(op.intended_start_ns.map(|ns| ns as i64));
        self.queue_ns.push(op.queue_ns.map(|ns| ns as i64));
        if let Some(shard) = op.shard {
            self.shard.push(shard as i32);
        }
    }

    /// Writes the columns as one row group, in the schema's order, and empties them.
    pub fn write<W: Write + Send>(
        &mut self,
        group: &mut SerializedRowGroupWriter<'_, W>,
    ) -> Result<()> {
        repeated(group, self.runs.iter().map(|run| (&run.run_id, run.rows)))?;
        repeated(group, self.runs.iter().map(|run| (&run.database, run.rows)))?;
        column::<ByteArrayType, W>(group, &self.event_type, None)?;
        column::<Int64Type, W>(group, &self.seq, None)?;
        column::<Int64Type, W>(group, &self.target, None)?;
        column::<Int64Type, W>(group, &self.timestamp, None)?;
        column::<Int64Type, W>(group, &self.latency_ns, None)?;
        column::<BoolType, W>(group, &self.success, None)?;
        optional::<ByteArrayType, W>(group, &self.error_kind)?;
        optional::<ByteArrayType, W>(group, &self.error)?;
        optional::<Int32Type, W>(group, &self.node)?;
        column::<Int32Type, W>(group, &self.attempts, None)?;
        optional::<ByteArrayType, W>(group, &self.error_code)?;
        optional::<Int64Type, W>(group, &self.intended_start)?;
        optional::<Int64Type, W>(group, &self.queue_ns)?;
        if !self.shard.is_empty() {
            column::<Int32Type, W>(group, &self.shard, None)?;
        }
        self.clear();
        Ok(())
    }

    fn clear(&mut self) {
        let last = self.runs.pop().expect("a run is always named");
        self.runs.clear();
        self.runs.push(RunRows { rows: 0, ..last });
        self.event_type.clear();
        self.seq.clear();
        self.target.clear();
        self.timestamp.clear();
        self.latency_ns.clear();
        self.success.clear();
        self.error_kind.clear();
        self.error.clear();
        self.node.clear();
        self.attempts.clear();
        self.error_code.clear();
        self.intended_start.clear();
        self.queue_ns.clear();
        self.shard.clear();
    }
}

/// Writes the next column of `group`.
fn column<T: DataType, W: Write + Send>(
    group: &mut SerializedRowGroupWriter<'_, W>,
    values: &[T::T],
    defined: Option<&[i16]>,
) -> Result<()> {
    let mut writer = group
        .next_column()?
        .context("the op log's schema has fewer columns than its rows")?;
    writer.typed::<T>().write_batch(values, defined, None)?;
    writer.close()?;
    Ok(())
}

/// A name as a column value: the static text itself, neither copied nor counted.
fn name(name: &'static str) -> ByteArray {
    Bytes::from_static(name.as_bytes()).into()
}

/// Writes the next column of `group`: each value for its number of rows.
fn repeated<'a, W: Write + Send>(
    group: &mut SerializedRowGroupWriter<'_, W>,
    runs: impl Iterator<Item = (&'a ByteArray, usize)>,
) -> Result<()> {
    let mut writer = group
        .next_column()?
        .context("the op log's schema has fewer columns than its rows")?;
    let typed = writer.typed::<ByteArrayType>();
    for (value, mut rows) in runs {
        let copies = vec![value.clone(); rows.min(COPIES)];
        while rows > 0 {
            let n = rows.min(copies.len());
            typed.write_batch(&copies[..n], None, None)?;
            rows -= n;
        }
    }
    writer.close()?;
    Ok(())
}

fn optional<T: DataType, W: Write + Send>(
    group: &mut SerializedRowGroupWriter<'_, W>,
    column_values: &Optional<T::T>,
) -> Result<()> {
    column::<T, W>(group, &column_values.values, Some(&column_values.defined))
}
