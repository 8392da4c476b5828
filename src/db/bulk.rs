//! Bulk loads (`hatshop load`): rows of a few values, written in batches of a given
//! size into their own table, `load_rows` (key `k`, value columns `c0`, `c1`, …). The
//! rows are a function of the seed, so a load is checked by regenerating them.

use serde::{Deserialize, Serialize};

use super::DbError;

/// What a store does for `hatshop load`. A store without bulk loads takes the defaults,
/// which say so before anything is sent.
pub trait BulkLoad: Send + Sync {
    /// After `Store::setup`: makes the load table with `shape.columns` value columns
    /// and readies its insert.
    fn load_setup(&self, _shape: LoadShape) -> impl Future<Output = Result<(), DbError>> + Send {
        async { Err(DbError::other("this store does not do bulk loads")) }
    }

    /// Turns a batch into what will be sent (SQL text, a pipeline), so that no
    /// formatting sits inside its timed window. Stores that send rows as they are do
    /// nothing.
    fn load_encode(&self, _batch: &mut LoadBatch) {}

    /// Writes one batch of rows, as `load_setup`'s shape says.
    fn load_batch(&self, _batch: &LoadBatch) -> impl Future<Output = Result<(), LoadError>> + Send {
        async {
            Err(LoadError::Db(DbError::other(
                "this store does not do bulk loads",
            )))
        }
    }

    /// Rows in the load table, for the check after a load.
    fn load_count(&self) -> impl Future<Output = Result<u64, DbError>> + Send {
        async { Err(DbError::other("this store does not do bulk loads")) }
    }

    /// One row of the load table: its values in column order.
    fn load_read(
        &self,
        _key: &str,
    ) -> impl Future<Output = Result<Option<Vec<Vec<u8>>>, DbError>> + Send {
        async { Err(DbError::other("this store does not do bulk loads")) }
    }
}

/// The table (Redis: the key prefix) a bulk load writes.
pub const LOAD_TABLE: &str = "load_rows";

/// How a batch travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    /// One request: Cassandra's unlogged batch, one multi-row INSERT, one pipeline.
    Unlogged,
    /// Cassandra's logged batch (atomic through the batch log); elsewhere as unlogged.
    Logged,
    /// Cassandra: the batch's rows as concurrent single-row writes, timed together.
    None,
}

/// What every batch of a load looks like.
#[derive(Debug, Clone, Copy)]
pub struct LoadShape {
    /// Value columns per row.
    pub columns: usize,
    pub kind: BatchKind,
    /// With `BatchKind::None`: single-row writes in flight at once.
    pub in_flight: usize,
}

/// The load a store was set up for (`load_setup`), once per connection, and the
/// text of its insert where it prepares one (made once, not per batch).
#[derive(Debug, Default)]
pub struct LoadSetup(std::sync::OnceLock<(LoadShape, String)>);

impl LoadSetup {
    /// Keeps the shape and statement of the one load this connection serves.
    pub fn set(&self, shape: LoadShape, insert: String) -> Result<(), DbError> {
        self.0
            .set((shape, insert))
            .map_err(|_| DbError::other("one bulk load per connection"))
    }

    fn get(&self) -> Result<&(LoadShape, String), DbError> {
        self.0
            .get()
            .ok_or_else(|| DbError::other("the load table is not set up"))
    }

    /// The rows' shape, once the load is set up.
    pub fn shape(&self) -> Result<LoadShape, DbError> {
        self.get().map(|(shape, _)| *shape)
    }

    /// The insert statement, once the load is set up.
    pub fn insert(&self) -> Result<&str, DbError> {
        self.get().map(|(_, insert)| insert.as_str())
    }
}

/// One batch's rows: keys, and `columns` values per row, row after row.
pub struct LoadBatch {
    pub keys: Vec<String>,
    pub values: Vec<Vec<u8>>,
    pub columns: usize,
    /// The batch as the store will send it (e.g. an INSERT's text), made by
    /// `Store::load_encode` before the batch is timed.
    pub encoded: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl LoadBatch {
    /// Rows `first..first + rows` of the load seeded with `seed`.
    pub fn generate(seed: u64, first: u64, rows: u64, columns: usize, value_size: usize) -> Self {
        let mut keys = Vec::with_capacity(rows as usize);
        let mut values = Vec::with_capacity(rows as usize * columns);
        for n in first..first + rows {
            keys.push(row_key(n));
            values.extend(row_values(seed, n, columns, value_size));
        }
        LoadBatch {
            keys,
            values,
            columns,
            encoded: None,
        }
    }

    /// Rows in the batch.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the batch holds no rows.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Each row's key and values.
    pub fn rows(&self) -> impl Iterator<Item = (&str, &[Vec<u8>])> {
        self.keys
            .iter()
            .map(String::as_str)
            .zip(self.values.chunks(self.columns.max(1)))
    }

    /// Bytes of keys and values: what the batch carries, before any protocol's framing.
    pub fn payload_bytes(&self) -> u64 {
        (self.keys.iter().map(String::len).sum::<usize>()
            + self.values.iter().map(Vec::len).sum::<usize>()) as u64
    }
}

/// Row `n`'s key: zero-padded, so keys sort as rows do.
pub fn row_key(n: u64) -> String {
    format!("row{n:010}")
}

/// Row `n`'s values: `value_size` bytes per column, the same for every load with `seed`.
pub fn row_values(seed: u64, n: u64, columns: usize, value_size: usize) -> Vec<Vec<u8>> {
    (0..columns as u64)
        .map(|c| {
            let mut state = seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (c << 56);
            let mut value = Vec::with_capacity(value_size);
            while value.len() < value_size {
                let word = splitmix64(&mut state).to_le_bytes();
                let take = (value_size - value.len()).min(8);
                value.extend_from_slice(&word[..take]);
            }
            value
        })
        .collect()
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A server (or protocol) limit that a batch ran into.
#[derive(Debug, Clone)]
pub struct BatchLimit {
    /// Which limit, e.g. "Cassandra's batch_size_fail_threshold".
    pub setting: String,
    /// Its value as the server states it, e.g. "50KiB".
    pub value: String,
    /// The limit in bytes of a batch, when it is one.
    pub bytes: Option<u64>,
    /// The limit in rows of a batch, when it is one.
    pub rows: Option<u64>,
    /// Bytes a row of the refused batch counts for against `bytes` (keys and values,
    /// and what the server or protocol adds per row).
    pub bytes_per_row: Option<f64>,
    /// How to raise it, when it can be.
    pub raise: Option<String>,
}

/// Why a batch failed: a limit on its size (every batch of that size will fail), or
/// anything else.
#[derive(Debug)]
pub enum LoadError {
    TooLarge(BatchLimit),
    Db(DbError),
}

impl From<DbError> for LoadError {
    fn from(error: DbError) -> Self {
        LoadError::Db(error)
    }
}

/// `"50KiB"`, `"16MiB"`, `"2048B"`, `"1GiB"`, a bare number of bytes: Cassandra's and
/// the SQL servers' sizes in bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits].parse().ok()?;
    let unit = match text[digits..].trim() {
        "" | "B" => 1,
        "KiB" | "KB" | "K" | "k" => 1 << 10,
        "MiB" | "MB" | "M" => 1 << 20,
        "GiB" | "GB" | "G" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_a_function_of_the_seed() {
        let a = LoadBatch::generate(7, 10, 5, 3, 20);
        let b = LoadBatch::generate(7, 12, 1, 3, 20);
        assert_eq!(a.len(), 5);
        assert_eq!(a.keys[2], b.keys[0]);
        assert_eq!(a.rows().nth(2).unwrap().1, b.rows().next().unwrap().1);
        assert_eq!(a.payload_bytes(), 5 * (13 + 60));
        let other_seed = LoadBatch::generate(8, 12, 1, 3, 20);
        assert_ne!(other_seed.values, b.values);
        let row = row_values(7, 12, 3, 20);
        assert_ne!(row[0], row[1], "columns differ");
    }

    #[test]
    fn sizes_in_the_servers_units() {
        assert_eq!(parse_size("50KiB"), Some(51_200));
        assert_eq!(parse_size("16MiB"), Some(16 << 20));
        assert_eq!(parse_size("67108864"), Some(67_108_864));
        assert_eq!(parse_size("5 parsecs"), None);
    }

    /// A store that takes the defaults refuses a load at its setup, before any batch.
    #[tokio::test]
    async fn a_store_without_bulk_loads_says_so_at_setup() {
        struct Plain;
        impl BulkLoad for Plain {}
        let shape = LoadShape {
            columns: 3,
            kind: BatchKind::Unlogged,
            in_flight: 1,
        };
        let refused = Plain.load_setup(shape).await.unwrap_err();
        assert_eq!(refused.message, "this store does not do bulk loads");
    }
}
