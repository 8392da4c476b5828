//! `kv_table=sbtest`: key-value records in sysbench's `sbtest` shape, so that the race
//! with `oltp_point_select` and `oltp_insert` makes the server do the same work: an INT
//! primary key, an INT `k` with its secondary index, `c` and a 60-character `pad`.
//!
//! The key's index is `id`; the value is `c`. hatshop's values are bytes (a header and
//! random bytes), so `c` is VARBINARY(120) where sysbench has CHAR(120): same length,
//! stored in the row alike, and read back byte for byte (a CHAR drops trailing spaces).
//! `pad` is sysbench's pattern of digits, the same in every row.

use crate::db::sql::Statements;
use crate::db::{DbError, ErrorKind, KV_PAGE};
use crate::workload::{KeyId, KeyText, splitmix64};

/// The longest value `c` holds (sysbench's `c CHAR(120)`).
pub const MAX_VALUE: usize = 120;

/// The table, under hatshop's name for its key-value records.
pub const CREATE: &str = "CREATE TABLE kv (
        id INT NOT NULL,
        k INT NOT NULL DEFAULT 0,
        c VARBINARY(120) NOT NULL DEFAULT '',
        pad CHAR(60) NOT NULL DEFAULT '',
        PRIMARY KEY (id),
        KEY k_1 (k)
    ) ENGINE=InnoDB";

/// Every row's `pad`: sysbench's five groups of eleven digits.
pub const PAD: &str = "67847967377-48000963322-62604785301-91415491898-96926520291";

/// The `kv` statements of `sql`, for this shape.
pub fn statements(sql: &mut Statements) {
    sql.kv_insert = "INSERT INTO kv (id, k, c, pad) VALUES (?, ?, ?, ?)".into();
    sql.kv_update = "UPDATE kv SET c = ? WHERE id = ?".into();
    sql.kv_select = "SELECT c FROM kv WHERE id = ?".into();
    sql.kv_delete = "DELETE FROM kv WHERE id = ?".into();
    sql.kv_page = format!("SELECT id, c FROM kv WHERE id > ? ORDER BY id LIMIT {KV_PAGE}");
}

/// The row id of a key: its index.
pub fn id(key: &KeyText) -> Result<i64, DbError> {
    KeyText::parse(key.as_str())
        .and_then(|id| i32::try_from(id).ok())
        .map(i64::from)
        .ok_or_else(|| {
            DbError::new(
                ErrorKind::Other,
                format!("key {key:?}: kv_table=sbtest holds key indexes below 2^31 (an INT id)"),
            )
        })
}

/// `k`: spread over a million values like sysbench's random `k`, so inserts land all
/// over its index; derived from the id, so a rerun writes the same rows.
pub fn k_of(id: i64) -> i64 {
    let mut state = id as u64;
    (splitmix64(&mut state) % 1_000_000) as i64 + 1
}

/// Whether `c` holds values of `len` bytes, or the error that says why not: checked
/// on each write and, for a generated workload, before the run starts.
pub fn check_value_size(len: usize) -> Result<(), DbError> {
    if len > MAX_VALUE {
        return Err(DbError::new(
            ErrorKind::Other,
            format!(
                "kv_table=sbtest holds values of at most {MAX_VALUE} bytes (sysbench's c), got {len}: use --value-size {MAX_VALUE} or less"
            ),
        ));
    }
    Ok(())
}

/// A row read back for `verify`: the key's text and its value.
pub fn record(id: i64, c: Vec<u8>) -> (String, Vec<u8>) {
    (KeyText::of(id as KeyId).as_str().to_string(), c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_its_index_and_back() {
        for index in [0u64, 1, 99_999, i32::MAX as u64] {
            let key = KeyText::of(index);
            let id = id(&key).unwrap();
            assert_eq!(id, index as i64);
            assert_eq!(record(id, vec![1]).0, key.as_str());
        }
        assert!(id(&KeyText::of(1 << 31)).is_err());
        assert_eq!(PAD.len(), 59);
    }

    #[test]
    fn values_longer_than_c_are_refused() {
        assert!(check_value_size(MAX_VALUE).is_ok());
        let error = check_value_size(MAX_VALUE + 1).unwrap_err();
        assert!(
            error.message.contains("at most 120 bytes"),
            "{}",
            error.message
        );
    }
}
