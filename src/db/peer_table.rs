//! Key-value records in a peer tool's own table, so that a race with it makes the
//! server do the same work: sysbench's `sbtest` (MariaDB, `kv_table=sbtest`) and
//! pgbench's `pgbench_accounts` (PostgreSQL, `kv_table=pgbench_accounts`). In both the
//! key's index is the row's INT id and the value sits in one column of bounded
//! length; the rest of the row is what the tool's own rows hold.

use super::{DbError, ErrorKind, Settings};
use crate::workload::{KeyId, KeyText};

/// The setting that chooses the table: `kv` (hatshop's own) or a peer's.
pub const SETTING: &str = "kv_table";

/// One peer's table, as hatshop's records fit in it.
pub struct PeerTable {
    /// Its word for `kv_table`.
    pub name: &'static str,
    /// The column that holds the value, as the peer's users know it.
    pub column: &'static str,
    /// The longest value that column holds.
    pub max_value: usize,
}

impl PeerTable {
    /// Whether `settings` choose this table.
    pub fn chosen(&self, settings: &Settings) -> bool {
        settings.choice(SETTING) == self.name
    }

    /// The row id of a key: its index.
    pub fn id(&self, key: &KeyText) -> Result<i64, DbError> {
        i32::try_from(key.index())
            .ok()
            .map(i64::from)
            .ok_or_else(|| {
                DbError::new(
                    ErrorKind::Other,
                    format!(
                        "key {key:?}: {SETTING}={} holds key indexes below 2^31 (an INT id)",
                        self.name
                    ),
                )
            })
    }

    /// Whether the value column holds values of `len` bytes, or the error that says
    /// why not: checked on each write and, for a generated workload, before the run
    /// starts.
    pub fn check_value_size(&self, len: usize) -> Result<(), DbError> {
        if len > self.max_value {
            return Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "{SETTING}={} holds values of at most {} bytes ({}), got {len}: use --value-size {} or less",
                    self.name, self.max_value, self.column, self.max_value
                ),
            ));
        }
        Ok(())
    }
}

/// A row read back for `verify`: the key's text and its value.
pub fn record(id: i64, value: Vec<u8>) -> (String, Vec<u8>) {
    (KeyText::of(id as KeyId).as_str().to_string(), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: PeerTable = PeerTable {
        name: "t",
        column: "t's c",
        max_value: 120,
    };

    #[test]
    fn a_key_is_its_index_and_back() {
        for index in [0u64, 1, 99_999, i32::MAX as u64] {
            let key = KeyText::of(index);
            let id = TABLE.id(&key).unwrap();
            assert_eq!(id, index as i64);
            assert_eq!(record(id, vec![1]).0, key.as_str());
        }
        let error = TABLE.id(&KeyText::of(1 << 31)).unwrap_err();
        assert!(
            error
                .message
                .contains("kv_table=t holds key indexes below 2^31")
        );
    }

    #[test]
    fn values_longer_than_the_column_are_refused() {
        assert!(TABLE.check_value_size(120).is_ok());
        let error = TABLE.check_value_size(121).unwrap_err();
        assert_eq!(
            error.message,
            "kv_table=t holds values of at most 120 bytes (t's c), got 121: use --value-size 120 or less"
        );
    }
}
