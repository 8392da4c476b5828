//! `kv_table=pgbench_accounts`: key-value records in pgbench's `pgbench_accounts`
//! shape, so that the race with `pgbench -S` makes the server do the same work: an INT
//! primary key `aid`, INT `bid` and `abalance`, and an 84-byte `filler`.
//!
//! The key's index is `aid`; the value is `filler`. hatshop's values are bytes, so
//! `filler` is BYTEA where pgbench has CHAR(84): the same 85 bytes in the row, read
//! back byte for byte. A read returns `filler` where pgbench's returns `abalance`; on
//! this machine that cost the server no CPU per read beyond the noise (bench/NOTES.md).
//! `bid` and `abalance` are what pgbench's rows hold at scale 1: 1 and 0.

use crate::db::KV_PAGE;
use crate::db::peer_table::PeerTable;
use crate::db::sql::Statements;

/// How hatshop's records fit in it: the value in `filler`, of at most 84 bytes.
pub const TABLE: PeerTable = PeerTable {
    name: "pgbench_accounts",
    column: "pgbench's filler",
    max_value: 84,
};

/// The table, under hatshop's name for its key-value records, with the columns of
/// `pgbench -i`'s (whose fillfactor, 100, is PostgreSQL's default).
pub const CREATE: &str = "CREATE TABLE kv (
        aid INT NOT NULL,
        bid INT NOT NULL,
        abalance INT NOT NULL,
        filler BYTEA NOT NULL
    )";
/// Its key, made with the table or after the load (tables.rs).
pub const KEY: &str = "ALTER TABLE kv ADD PRIMARY KEY (aid)";

/// The `kv` statements of `sql`, for this shape.
pub fn statements(sql: &mut Statements) {
    sql.kv_insert = "INSERT INTO kv (aid, bid, abalance, filler) VALUES ($1, 1, 0, $2)".into();
    sql.kv_update = "UPDATE kv SET filler = $1 WHERE aid = $2".into();
    sql.kv_select = "SELECT filler FROM kv WHERE aid = $1".into();
    sql.kv_delete = "DELETE FROM kv WHERE aid = $1".into();
    sql.kv_page = format!("SELECT aid, filler FROM kv WHERE aid > $1 ORDER BY aid LIMIT {KV_PAGE}");
}
