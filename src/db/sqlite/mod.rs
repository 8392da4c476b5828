//! SQLite, embedded (rusqlite with the bundled SQLite): the default store, no server.
//!
//! WAL mode, `synchronous=normal` by default, prepared (cached) statements, each write
//! one transaction. Calls run on the lane's own thread: SQLite is a library, so the
//! time of the call is the time of the work, with no hand-off to another thread inside.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

mod bulk_load;
mod initial_load;

use crate::db::ownership::{self, Marker, Ownership, TABLES};
use crate::db::sql::{ITEM_COLUMNS, ORDER_COLUMNS, setup_statements, unknown_status};
use crate::db::{
    Applied, ConnectOptions, DbError, DbUrl, DeclaredStore, ErrorKind, KV_PAGE, KvPage, OrderRow,
    Setting, Snapshot, Store, StoreDeclarations, StoreFacts, Value,
};
use crate::workload::{
    ItemsUpdate, KeyText, LineItem, Order, OrderId, OrderStatus, OrderUpdate, StatusUpdate, payload,
};

const CREATE: &[&str] = &[
    "CREATE TABLE orders (
        order_id       INTEGER PRIMARY KEY,
        client_id      INTEGER NOT NULL,
        customer       TEXT    NOT NULL,
        address        TEXT    NOT NULL,
        created_at_ms  INTEGER NOT NULL,
        status         TEXT    NOT NULL,
        subtotal_cents INTEGER NOT NULL,
        payload        TEXT    NOT NULL
    )",
    "CREATE TABLE line_items (
        line_item_id     INTEGER PRIMARY KEY,
        order_id         INTEGER NOT NULL REFERENCES orders(order_id),
        product          TEXT    NOT NULL,
        colour           TEXT    NOT NULL,
        size             TEXT    NOT NULL,
        quantity         INTEGER NOT NULL,
        unit_price_cents INTEGER NOT NULL
    )",
    "CREATE INDEX line_items_by_order ON line_items(order_id)",
    "CREATE TABLE kv (k TEXT PRIMARY KEY, v BLOB NOT NULL)",
];

/// SQLite's name for a database in memory: private to each connection that opens it.
const MEMORY: &str = ":memory:";

/// How long a connection waits for another's write lock before `timeout`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections opened at most (one writer at a time anyway).
const MAX_CONNECTIONS: usize = 4;

/// A SQLite file in WAL mode, opened by a few connections.
pub struct SqliteStore {
    path: PathBuf,
    synchronous: &'static str,
    connections: Vec<Mutex<Connection>>,
    next: AtomicUsize,
    version: String,
    load: crate::db::LoadSetup,
}

impl DeclaredStore for SqliteStore {
    const DECLARED: StoreDeclarations = StoreDeclarations {
        in_process: true,
        own_file: Some("hatshop.db"),
        in_memory: Some(MEMORY),
        ..StoreDeclarations::new(
            "sqlite",
            "SQLite, embedded: no server (the default; `sqlite://` alone puts hatshop.db in the result folder)",
            "sqlite://shop.db?synchronous=full",
            &[Setting {
                name: "synchronous",
                value: Value::Choice(&["off", "normal", "full", "extra"]),
                default: "normal",
                help: "SQLite's durability per commit (PRAGMA synchronous)",
            }],
            // One writer at a time: more lanes only queue on its lock.
            |_| 1,
        )
    };

    async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let Some(path) = url.file() else {
            return Err(DbError::new(
                ErrorKind::Connection,
                "sqlite:// needs a file path, e.g. sqlite://hatshop.db",
            ));
        };
        let in_memory = path.as_os_str() == MEMORY;
        if options.existing_only && in_memory {
            return Err(DbError::new(
                ErrorKind::Connection,
                "sqlite://:memory: is gone with the run that made it: only that run can read it",
            ));
        }
        if options.existing_only && !path.is_file() {
            return Err(DbError::new(
                ErrorKind::Connection,
                format!("no SQLite database at {}", path.display()),
            ));
        }
        let synchronous = options.settings.choice("synchronous");
        // Each connection to `:memory:` opens a database of its own: the lanes share one.
        let count = if in_memory {
            1
        } else {
            options.concurrency.clamp(1, MAX_CONNECTIONS)
        };
        let connections = (0..count)
            .map(|_| open_connection(&path, synchronous, options.existing_only).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SqliteStore {
            path,
            synchronous,
            connections,
            next: AtomicUsize::new(0),
            version: format!("SQLite {}", rusqlite::version()),
            load: Default::default(),
        })
    }
}

impl SqliteStore {
    /// A free connection if there is one, else the next in turn; the wait for it is
    /// queue time.
    fn connection(&self) -> MutexGuard<'_, Connection> {
        crate::db::queued_sync(|| self.take_connection())
    }

    fn take_connection(&self) -> MutexGuard<'_, Connection> {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.connections.len();
        for i in 0..n {
            if let Ok(guard) = self.connections[(start + i) % n].try_lock() {
                return guard;
            }
        }
        self.connections[start % n]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn target(&self) -> String {
        format!("sqlite://{}", self.path.display())
    }

    fn existing_tables(&self, conn: &Connection) -> Result<Vec<String>, DbError> {
        let mut statement = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .map_err(classify)?;
        let names = statement
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(classify)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(classify)?;
        Ok(names
            .into_iter()
            .filter(|n| TABLES.contains(&n.as_str()))
            .collect())
    }
}

fn open_connection(
    path: &Path,
    synchronous: &str,
    existing_only: bool,
) -> Result<Connection, DbError> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if !existing_only {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|e| {
        DbError::new(
            ErrorKind::Connection,
            format!("cannot open sqlite://{}: {e}", path.display()),
        )
    })?;
    conn.busy_handler(Some(wait_for_lock)).map_err(classify)?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous}; PRAGMA foreign_keys=ON;"
    ))
    .map_err(|e| {
        DbError::new(
            ErrorKind::Connection,
            format!("cannot use sqlite://{}: {e}", path.display()),
        )
    })?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(conn)
}

/// How SQLite waits for another connection's lock: in short sleeps, up to
/// `BUSY_TIMEOUT` (then `timeout`), and not at all once Ctrl-C came, so that a run
/// stuck behind a lock still stops within a second.
fn wait_for_lock(attempt: i32) -> bool {
    const STEP: Duration = Duration::from_millis(2);
    if crate::interrupt::requested() || STEP * attempt as u32 >= BUSY_TIMEOUT {
        return false;
    }
    std::thread::sleep(STEP);
    true
}

/// SQLite's result codes as error kinds.
fn kind_of(code: rusqlite::ErrorCode) -> ErrorKind {
    use rusqlite::ErrorCode as C;
    match code {
        C::DatabaseBusy | C::DatabaseLocked => ErrorKind::Timeout,
        C::ConstraintViolation => ErrorKind::Constraint,
        C::CannotOpen | C::NotADatabase | C::ReadOnly | C::PermissionDenied => {
            ErrorKind::Connection
        }
        _ => ErrorKind::Other,
    }
}

fn classify(error: rusqlite::Error) -> DbError {
    let kind = match &error {
        rusqlite::Error::SqliteFailure(e, _) => kind_of(e.code),
        _ => ErrorKind::Other,
    };
    DbError::new(kind, error.to_string())
}

fn status_from_db(text: &str) -> rusqlite::Result<OrderStatus> {
    OrderStatus::parse(text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            5,
            rusqlite::types::Type::Text,
            Box::new(unknown_status(text)),
        )
    })
}

fn order_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<OrderRow> {
    let order_id = row.get::<_, i64>(0)? as u64;
    Ok(OrderRow {
        order_id,
        client_id: row.get::<_, i64>(1)? as u64,
        customer: row.get(2)?,
        address: row.get(3)?,
        created_at_ms: row.get(4)?,
        status: status_from_db(&row.get::<_, String>(5)?)?,
        subtotal_cents: row.get(6)?,
        payload: payload::read(order_id, row.get_ref(7)?.as_bytes()?),
    })
}

/// Columns 0..6 are the item.
fn line_item(row: &rusqlite::Row<'_>) -> rusqlite::Result<LineItem> {
    Ok(LineItem {
        line_item_id: row.get::<_, i64>(0)? as u64,
        product: row.get::<_, String>(1)?.into(),
        colour: row.get::<_, String>(2)?.into(),
        size: row.get::<_, String>(3)?.into(),
        quantity: row.get(4)?,
        unit_price_cents: row.get(5)?,
    })
}

impl crate::db::DbTiming for SqliteStore {}

impl Store for SqliteStore {
    async fn setup(&self, owner: &Ownership) -> Result<(), DbError> {
        let mut conn = self.connection();
        let existing = self.existing_tables(&conn)?;
        let statements = setup_statements(&self.target(), owner, &existing, CREATE, "TEXT")?;
        let tx = conn.transaction().map_err(classify)?;
        for statement in statements {
            tx.execute_batch(&statement).map_err(classify)?;
        }
        tx.commit().map_err(classify)
    }

    async fn check_owned(&self) -> Result<Marker, DbError> {
        let conn = self.connection();
        ownership::check_marked(&self.target(), &self.existing_tables(&conn)?)?;
        let made_by: Option<String> = conn
            .query_row(ownership::READ_MARKER, [], |row| row.get(0))
            .optional()
            .map_err(classify)?;
        Ok(Marker {
            made_by: made_by.unwrap_or_default(),
        })
    }

    async fn holding(&self) -> Result<Option<String>, DbError> {
        self.connection()
            .query_row(ownership::READ_HOLDING, [], |row| row.get(0))
            .optional()
            .map_err(classify)
    }

    async fn write_holding(&self, note: &str) -> Result<(), DbError> {
        let conn = self.connection();
        conn.execute(ownership::CLEAR_HOLDING, [])
            .map_err(classify)?;
        conn.execute(&ownership::write_holding("?1"), [note])
            .map(drop)
            .map_err(classify)
    }

    async fn create_order(&self, order: &Order, payload: &str) -> Result<(), DbError> {
        let mut conn = self.connection();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(classify)?;
        initial_load::insert_order(&tx, order, payload)?;
        tx.commit().map_err(classify)
    }

    /// One transaction per batch (initial_load.rs).
    async fn load_initial(&self, batch: &crate::db::InitialBatch<'_>) -> Result<(), DbError> {
        initial_load::insert_batch(&mut self.connection(), batch)
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        let mut conn = self.connection();
        let tx = conn.transaction().map_err(classify)?;
        let row = tx
            .prepare_cached(&format!(
                "SELECT {ORDER_COLUMNS} FROM orders WHERE order_id = ?1"
            ))
            .map_err(classify)?
            .query_row([order_id as i64], order_row)
            .optional()
            .map_err(classify)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let items = tx
            .prepare_cached(&format!(
                "SELECT {ITEM_COLUMNS} FROM line_items WHERE order_id = ?1 ORDER BY line_item_id"
            ))
            .map_err(classify)?
            .query_map([order_id as i64], line_item)
            .map_err(classify)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(classify)?;
        Ok(Some(crate::db::order_of(row, items)))
    }

    async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let conn = self.connection();
        let rows = conn
            .prepare_cached(
                "UPDATE orders SET created_at_ms = ?1, status = ?2, subtotal_cents = ?3 WHERE order_id = ?4",
            )
            .map_err(classify)?
            .execute(params![
                update.created_at_ms,
                update.status.as_str(),
                update.subtotal_cents,
                order_id as i64
            ])
            .map_err(classify)?;
        Ok(Applied::from_rows(rows as u64))
    }

    async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let mut conn = self.connection();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(classify)?;
        let rows = {
            let mut update_item = tx
                .prepare_cached(
                    "UPDATE line_items SET colour = ?1, size = ?2, quantity = ?3 \
                     WHERE line_item_id = ?4 AND order_id = ?5",
                )
                .map_err(classify)?;
            for change in update.changes {
                update_item
                    .execute(params![
                        change.colour,
                        change.size,
                        change.quantity,
                        change.line_item_id as i64,
                        order_id as i64
                    ])
                    .map_err(classify)?;
            }
            tx.prepare_cached("UPDATE orders SET subtotal_cents = ?1 WHERE order_id = ?2")
                .map_err(classify)?
                .execute(params![update.subtotal_cents, order_id as i64])
                .map_err(classify)?
        };
        tx.commit().map_err(classify)?;
        Ok(Applied::from_rows(rows as u64))
    }

    async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
        let StatusUpdate { order_id, status } = update;
        let conn = self.connection();
        let rows = conn
            .prepare_cached("UPDATE orders SET status = ?1 WHERE order_id = ?2")
            .map_err(classify)?
            .execute(params![status.as_str(), order_id as i64])
            .map_err(classify)?;
        Ok(Applied::from_rows(rows as u64))
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        let mut conn = self.connection();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(classify)?;
        let rows = {
            tx.prepare_cached("DELETE FROM line_items WHERE order_id = ?1")
                .map_err(classify)?
                .execute([order_id as i64])
                .map_err(classify)?;
            tx.prepare_cached("DELETE FROM orders WHERE order_id = ?1")
                .map_err(classify)?
                .execute([order_id as i64])
                .map_err(classify)?
        };
        tx.commit().map_err(classify)?;
        Ok(Applied::from_rows(rows as u64))
    }

    async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
        let conn = self.connection();
        conn.prepare_cached("INSERT INTO kv (k, v) VALUES (?1, ?2)")
            .map_err(classify)?
            .execute(params![key.as_str(), value])
            .map_err(classify)?;
        Ok(())
    }

    async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
        let conn = self.connection();
        let rows = conn
            .prepare_cached("UPDATE kv SET v = ?1 WHERE k = ?2")
            .map_err(classify)?
            .execute(params![value, key.as_str()])
            .map_err(classify)?;
        Ok(Applied::from_rows(rows as u64))
    }

    async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        let conn = self.connection();
        conn.prepare_cached("SELECT v FROM kv WHERE k = ?1")
            .map_err(classify)?
            .query_row([key.as_str()], |row| row.get::<_, Vec<u8>>(0))
            .optional()
            .map_err(classify)
    }

    async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
        let conn = self.connection();
        let rows = conn
            .prepare_cached("DELETE FROM kv WHERE k = ?1")
            .map_err(classify)?
            .execute([key.as_str()])
            .map_err(classify)?;
        Ok(Applied::from_rows(rows as u64))
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        let mut conn = self.connection();
        let tx = conn.transaction().map_err(classify)?;
        let orders = tx
            .prepare(&format!(
                "SELECT {ORDER_COLUMNS} FROM orders ORDER BY order_id"
            ))
            .map_err(classify)?
            .query_map([], order_row)
            .map_err(classify)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(classify)?;
        let items = tx
            .prepare(&format!(
                "SELECT {ITEM_COLUMNS}, order_id FROM line_items ORDER BY order_id, line_item_id"
            ))
            .map_err(classify)?
            .query_map([], |row| {
                Ok((row.get::<_, i64>(6)? as u64, line_item(row)?))
            })
            .map_err(classify)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(classify)?;
        Ok(Snapshot { orders, items })
    }

    async fn kv_page(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        let after = String::from_utf8(cursor.unwrap_or_default()).unwrap_or_default();
        let conn = self.connection();
        let records = conn
            .prepare_cached(&format!(
                "SELECT k, v FROM kv WHERE k > ?1 ORDER BY k LIMIT {KV_PAGE}"
            ))
            .map_err(classify)?
            .query_map([after], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))
            })
            .map_err(classify)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(classify)?;
        let next = (records.len() == KV_PAGE)
            .then(|| records.last().map(|(k, _)| k.clone().into_bytes()))
            .flatten();
        Ok(KvPage { records, next })
    }

    fn facts(&self) -> StoreFacts {
        let settings = BTreeMap::from([
            ("path".to_string(), self.path.display().to_string()),
            ("journal_mode".to_string(), "wal".to_string()),
            ("synchronous".to_string(), self.synchronous.to_string()),
            (
                "connections".to_string(),
                self.connections.len().to_string(),
            ),
            (
                "busy_timeout_ms".to_string(),
                BUSY_TIMEOUT.as_millis().to_string(),
            ),
        ]);
        StoreFacts {
            name: Self::DECLARED.scheme.into(),
            server_version: self.version.clone(),
            settings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::ErrorCode as C;

    #[test]
    fn sqlite_codes_sort_into_kinds() {
        assert_eq!(kind_of(C::DatabaseBusy), ErrorKind::Timeout);
        assert_eq!(kind_of(C::DatabaseLocked), ErrorKind::Timeout);
        assert_eq!(kind_of(C::ConstraintViolation), ErrorKind::Constraint);
        assert_eq!(kind_of(C::CannotOpen), ErrorKind::Connection);
        assert_eq!(kind_of(C::DiskFull), ErrorKind::Other);
        let decode = classify(rusqlite::Error::InvalidColumnType(
            0,
            "v".into(),
            rusqlite::types::Type::Null,
        ));
        assert_eq!(decode.kind, ErrorKind::Other);
    }
}
