//! `kv_table=sbtest`: key-value records in sysbench's `sbtest` shape, so that the race
//! with `oltp_point_select` and `oltp_insert` makes the server do the same work: an INT
//! primary key, an INT `k` with its secondary index, `c` and a 60-character `pad`.
//!
//! The key's index is `id`; the value is `c`. hatshop's values are bytes (a header and
//! random bytes), so `c` is VARBINARY(120) where sysbench has CHAR(120): same length,
//! stored in the row alike, and read back byte for byte (a CHAR drops trailing spaces).
//! `pad` is sysbench's pattern of digits, the same in every row.

use crate::db::KV_PAGE;
use crate::db::peer_table::PeerTable;
use crate::db::sql::Statements;
use crate::workload::splitmix64;

/// How hatshop's records fit in it: the value in `c`, of at most 120 bytes
/// (sysbench's `c CHAR(120)`).
pub const TABLE: PeerTable = PeerTable {
    name: "sbtest",
    column: "sysbench's c",
    max_value: 120,
};

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

/// `k`: spread over a million values like sysbench's random `k`, so inserts land all
/// over its index; derived from the id, so a rerun writes the same rows.
pub fn k_of(id: i64) -> i64 {
    let mut state = id as u64;
    (splitmix64(&mut state) % 1_000_000) as i64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_is_sysbenchs_and_k_stays_in_its_range() {
        assert_eq!(PAD.len(), 59);
        for id in [0, 1, 99_999, i64::from(i32::MAX)] {
            assert!((1..=1_000_000).contains(&k_of(id)));
        }
    }
}
