//! SQLite, embedded (rusqlite with the bundled SQLite): the default store, no server.
//!
//! WAL mode, `synchronous=NORMAL` (setting `synchronous=off|normal|full|extra`), prepared (cached) statements, each write one
//! transaction. Calls run on the lane's own thread: SQLite is a library, so the time
//! of the call is the time of the work, with no hand-off to another thread inside it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::sql::order_from;
use super::{
    Applied, ConnectOptions, Database, DbError, DbUrl, ErrorKind, OrderRow, Snapshot, StoreInfo,
};
use crate::workload::{ItemChange, LineItem, Order, OrderId, OrderStatus};

const SCHEMA: &str = "
DROP TABLE IF EXISTS line_items;
DROP TABLE IF EXISTS orders;
CREATE TABLE orders (
    order_id       INTEGER PRIMARY KEY,
    client_id      INTEGER NOT NULL,
    customer       TEXT    NOT NULL,
    address        TEXT    NOT NULL,
    created_at_ms  INTEGER NOT NULL,
    status         TEXT    NOT NULL,
    subtotal_cents INTEGER NOT NULL
);
CREATE TABLE line_items (
    line_item_id     INTEGER PRIMARY KEY,
    order_id         INTEGER NOT NULL REFERENCES orders(order_id),
    product          TEXT    NOT NULL,
    colour           TEXT    NOT NULL,
    size             TEXT    NOT NULL,
    quantity         INTEGER NOT NULL,
    unit_price_cents INTEGER NOT NULL
);
CREATE INDEX line_items_by_order ON line_items(order_id);
";

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_CONNECTIONS: usize = 4;

pub struct SqliteStore {
    path: PathBuf,
    synchronous: String,
    connections: Vec<Mutex<Connection>>,
    next: AtomicUsize,
    version: String,
}

impl SqliteStore {
    /// `sqlite://PATH`: relative, or absolute with a third slash.
    pub fn open(url: &DbUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let mut reader = options.settings.reader("sqlite");
        let synchronous = reader
            .text("synchronous")
            .unwrap_or_else(|| "normal".into());
        reader.finish(&["synchronous"])?;
        if !["off", "normal", "full", "extra"].contains(&synchronous.as_str()) {
            return Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "sqlite setting synchronous={synchronous}: expected off, normal, full or extra"
                ),
            ));
        }
        if url.rest.is_empty() {
            return Err(DbError::new(
                ErrorKind::Connection,
                "sqlite:// needs a file path, e.g. sqlite://hatshop.db",
            ));
        }
        let path = PathBuf::from(&url.rest);
        let count = options.concurrency.clamp(1, MAX_CONNECTIONS);
        let connections = (0..count)
            .map(|_| open_connection(&path, &synchronous).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()?;
        let version = rusqlite::version().to_string();
        Ok(SqliteStore {
            path,
            synchronous,
            connections,
            next: AtomicUsize::new(0),
            version,
        })
    }

    /// A free connection if there is one, else the next in turn.
    fn connection(&self) -> MutexGuard<'_, Connection> {
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
}

fn open_connection(path: &Path, synchronous: &str) -> Result<Connection, DbError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| {
        DbError::new(
            ErrorKind::Connection,
            format!("cannot open sqlite://{}: {e}", path.display()),
        )
    })?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(classify)?;
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

fn classify(error: rusqlite::Error) -> DbError {
    use rusqlite::ErrorCode;
    let kind = match &error {
        rusqlite::Error::SqliteFailure(e, _) => match e.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => ErrorKind::Timeout,
            ErrorCode::ConstraintViolation => ErrorKind::Constraint,
            ErrorCode::CannotOpen | ErrorCode::NotADatabase => ErrorKind::Connection,
            _ => ErrorKind::Other,
        },
        _ => ErrorKind::Other,
    };
    DbError::new(kind, error.to_string())
}

fn status_from_db(text: &str) -> rusqlite::Result<OrderStatus> {
    OrderStatus::parse(text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            5,
            rusqlite::types::Type::Text,
            format!("unknown order status '{text}'").into(),
        )
    })
}

fn order_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<OrderRow> {
    Ok(OrderRow {
        order_id: row.get::<_, i64>(0)? as u64,
        client_id: row.get::<_, i64>(1)? as u64,
        customer: row.get(2)?,
        address: row.get(3)?,
        created_at_ms: row.get(4)?,
        status: status_from_db(&row.get::<_, String>(5)?)?,
        subtotal_cents: row.get(6)?,
    })
}

/// Columns 0..6 are the item; column 6, when present, its order id.
fn line_item(row: &rusqlite::Row<'_>) -> rusqlite::Result<LineItem> {
    Ok(LineItem {
        line_item_id: row.get::<_, i64>(0)? as u64,
        product: row.get(1)?,
        colour: row.get(2)?,
        size: row.get(3)?,
        quantity: row.get(4)?,
        unit_price_cents: row.get(5)?,
    })
}

const ORDER_COLUMNS: &str =
    "order_id, client_id, customer, address, created_at_ms, status, subtotal_cents";
const ITEM_COLUMNS: &str = "line_item_id, product, colour, size, quantity, unit_price_cents";

impl Database for SqliteStore {
    async fn setup(&self) -> Result<(), DbError> {
        self.connection().execute_batch(SCHEMA).map_err(classify)
    }

    async fn create_order(&self, order: &Order) -> Result<(), DbError> {
        let mut conn = self.connection();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(classify)?;
        {
            let mut insert_order = tx
                .prepare_cached(
                    "INSERT INTO orders (order_id, client_id, customer, address, created_at_ms, status, subtotal_cents) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(classify)?;
            insert_order
                .execute(params![
                    order.order_id as i64,
                    order.client_id as i64,
                    order.customer,
                    order.address,
                    order.created_at_ms,
                    order.status.as_str(),
                    order.subtotal_cents
                ])
                .map_err(classify)?;
            let mut insert_item = tx
                .prepare_cached(
                    "INSERT INTO line_items (line_item_id, order_id, product, colour, size, quantity, unit_price_cents) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(classify)?;
            for item in &order.items {
                insert_item
                    .execute(params![
                        item.line_item_id as i64,
                        order.order_id as i64,
                        item.product,
                        item.colour,
                        item.size,
                        item.quantity,
                        item.unit_price_cents
                    ])
                    .map_err(classify)?;
            }
        }
        tx.commit().map_err(classify)
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
        Ok(Some(order_from(row, items)))
    }

    async fn update_order(
        &self,
        order_id: OrderId,
        changes: &[ItemChange],
        subtotal_cents: i64,
    ) -> Result<Applied, DbError> {
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
            for change in changes {
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
                .execute(params![subtotal_cents, order_id as i64])
                .map_err(classify)?
        };
        tx.commit().map_err(classify)?;
        Ok(Applied::from_rows(rows as u64))
    }

    async fn update_status(
        &self,
        order_id: OrderId,
        status: OrderStatus,
    ) -> Result<Applied, DbError> {
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

    fn info(&self) -> StoreInfo {
        let settings = BTreeMap::from([
            ("path".to_string(), self.path.display().to_string()),
            ("journal_mode".to_string(), "wal".to_string()),
            ("synchronous".to_string(), self.synchronous.clone()),
            (
                "connections".to_string(),
                self.connections.len().to_string(),
            ),
            (
                "busy_timeout_ms".to_string(),
                BUSY_TIMEOUT.as_millis().to_string(),
            ),
        ]);
        StoreInfo {
            name: "sqlite".into(),
            server_version: self.version.clone(),
            settings,
        }
    }
}
