//! PostgreSQL through `tokio-postgres`: `pool` connections (default 4), each with its
//! statements prepared once, each write one transaction.
//!
//! Settings: `pool=N`.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Row, Statement};

use super::settings::Settings;
use super::sql::{
    ITEM_COLUMNS, ORDER_COLUMNS, Placeholders, Statements, order_from_joined, snapshot_from,
};
use super::{Applied, DbError, DbUrl, ErrorKind, OrderRow, Snapshot, StoreInfo};
use crate::workload::{ItemChange, LineItem, Order, OrderId, OrderStatus};

const SCHEMA: &str = "
DROP TABLE IF EXISTS line_items;
DROP TABLE IF EXISTS orders;
CREATE TABLE orders (
    order_id BIGINT PRIMARY KEY,
    client_id BIGINT NOT NULL,
    customer TEXT NOT NULL,
    address TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    status TEXT NOT NULL,
    subtotal_cents BIGINT NOT NULL
);
CREATE TABLE line_items (
    line_item_id BIGINT PRIMARY KEY,
    order_id BIGINT NOT NULL REFERENCES orders (order_id),
    product TEXT NOT NULL,
    colour TEXT NOT NULL,
    size TEXT NOT NULL,
    quantity INT NOT NULL,
    unit_price_cents BIGINT NOT NULL
);
CREATE INDEX line_items_by_order ON line_items (order_id);
";

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_POOL: usize = 4;

/// One connection and the statements prepared on it.
struct PgConn {
    client: Client,
    prepared: HashMap<String, Statement>,
}

impl PgConn {
    async fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await.map_err(classify)?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

pub struct PostgresStore {
    connections: Vec<Mutex<PgConn>>,
    next: std::sync::atomic::AtomicUsize,
    version: String,
    sql: Statements,
}

fn classify(error: tokio_postgres::Error) -> DbError {
    let kind = match error.code() {
        Some(code)
            if *code == SqlState::T_R_SERIALIZATION_FAILURE
                || *code == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            ErrorKind::Conflict
        }
        Some(code)
            if *code == SqlState::UNIQUE_VIOLATION || *code == SqlState::FOREIGN_KEY_VIOLATION =>
        {
            ErrorKind::Constraint
        }
        Some(code)
            if *code == SqlState::QUERY_CANCELED || *code == SqlState::LOCK_NOT_AVAILABLE =>
        {
            ErrorKind::Timeout
        }
        Some(code)
            if *code == SqlState::INVALID_PASSWORD
                || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                || *code == SqlState::INVALID_CATALOG_NAME
                || *code == SqlState::TOO_MANY_CONNECTIONS
                || *code == SqlState::ADMIN_SHUTDOWN
                || *code == SqlState::CANNOT_CONNECT_NOW =>
        {
            ErrorKind::Connection
        }
        Some(_) => ErrorKind::Other,
        None => ErrorKind::Connection,
    };
    let message = match (error.as_db_error(), std::error::Error::source(&error)) {
        (Some(db), _) => format!("{}: {}", db.severity(), db.message()),
        (None, Some(cause)) => format!("{error}: {cause}"),
        (None, None) => error.to_string(),
    };
    DbError::new(kind, message)
}

fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
) -> Result<T, DbError> {
    row.try_get(index)
        .map_err(|e| DbError::new(ErrorKind::Other, format!("column {index}: {e}")))
}

fn order_row(row: &Row) -> Result<OrderRow, DbError> {
    let status: &str = get(row, 5)?;
    Ok(OrderRow {
        order_id: get::<i64>(row, 0)? as u64,
        client_id: get::<i64>(row, 1)? as u64,
        customer: get(row, 2)?,
        address: get(row, 3)?,
        created_at_ms: get(row, 4)?,
        status: OrderStatus::parse(status)
            .ok_or_else(|| DbError::new(ErrorKind::Other, format!("unknown status '{status}'")))?,
        subtotal_cents: get(row, 6)?,
    })
}

fn line_item(row: &Row, at: usize) -> Result<Option<LineItem>, DbError> {
    let Some(id) = get::<Option<i64>>(row, at)? else {
        return Ok(None);
    };
    Ok(Some(LineItem {
        line_item_id: id as u64,
        product: get(row, at + 1)?,
        colour: get(row, at + 2)?,
        size: get(row, at + 3)?,
        quantity: get::<i32>(row, at + 4)? as u32,
        unit_price_cents: get(row, at + 5)?,
    }))
}

impl PostgresStore {
    pub async fn open(url: &DbUrl, settings: &Settings) -> Result<Self, DbError> {
        let mut reader = settings.reader("postgres");
        let pool: usize = reader
            .parsed("pool", "a number of connections")?
            .unwrap_or(DEFAULT_POOL);
        reader.finish(&["pool"])?;
        if pool == 0 {
            return Err(DbError::new(
                ErrorKind::Other,
                "postgres setting pool must be at least 1",
            ));
        }
        let address = url
            .address(5432)
            .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
        let (host, port) = address.hosts[0].clone();
        let mut config = tokio_postgres::Config::new();
        config
            .host(&host)
            .port(port)
            .user(address.user.as_deref().unwrap_or("postgres"))
            .dbname(address.name.as_deref().unwrap_or("hatshop"))
            .connect_timeout(CONNECT_TIMEOUT);
        if let Some(password) = &address.password {
            config.password(password);
        }
        let mut connections = Vec::with_capacity(pool);
        for _ in 0..pool {
            let (client, connection) = config.connect(NoTls).await.map_err(classify)?;
            // The connection task ends when the server goes; the client then reports
            // "connection closed" on every call, which the runner counts.
            tokio::spawn(async move {
                let _ = connection.await;
            });
            connections.push(Mutex::new(PgConn {
                client,
                prepared: HashMap::new(),
            }));
        }
        let version: String = {
            let conn = connections[0].lock().await;
            let row = conn
                .client
                .query_one("SHOW server_version", &[])
                .await
                .map_err(classify)?;
            get(&row, 0)?
        };
        Ok(PostgresStore {
            connections,
            next: Default::default(),
            version,
            sql: Statements::new(Placeholders::Dollar),
        })
    }

    /// A free connection if there is one, else the next in turn.
    async fn conn(&self) -> MutexGuard<'_, PgConn> {
        let n = self.connections.len();
        let start = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for i in 0..n {
            if let Ok(guard) = self.connections[(start + i) % n].try_lock() {
                return guard;
            }
        }
        self.connections[start % n].lock().await
    }
}

impl super::Database for PostgresStore {
    async fn setup(&self) -> Result<(), DbError> {
        let conn = self.conn().await;
        conn.client.batch_execute(SCHEMA).await.map_err(classify)?;
        drop(conn);
        // Statements prepared against the old tables are stale now; prepare them again
        // on every connection before anything is measured.
        for connection in &self.connections {
            let mut conn = connection.lock().await;
            conn.prepared.clear();
            for sql in self.sql.ahead() {
                conn.statement(&sql).await?;
            }
        }
        Ok(())
    }

    async fn create_order(&self, order: &Order) -> Result<(), DbError> {
        let mut conn = self.conn().await;
        let insert_order = conn.statement(&self.sql.insert_order).await?;
        let insert_items = conn
            .statement(&self.sql.insert_items(order.items.len()))
            .await?;
        let order_id = order.order_id as i64;
        let client_id = order.client_id as i64;
        let tx = conn.client.transaction().await.map_err(classify)?;
        tx.execute(
            &insert_order,
            &[
                &order_id,
                &client_id,
                &order.customer,
                &order.address,
                &order.created_at_ms,
                &order.status.as_str(),
                &order.subtotal_cents,
            ],
        )
        .await
        .map_err(classify)?;
        let ids: Vec<i64> = order.items.iter().map(|i| i.line_item_id as i64).collect();
        let quantities: Vec<i32> = order.items.iter().map(|i| i.quantity as i32).collect();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(order.items.len() * 7);
        for (k, item) in order.items.iter().enumerate() {
            params.extend([
                &ids[k] as &(dyn ToSql + Sync),
                &order_id,
                &item.product,
                &item.colour,
                &item.size,
                &quantities[k],
                &item.unit_price_cents,
            ]);
        }
        tx.execute(&insert_items, &params).await.map_err(classify)?;
        tx.commit().await.map_err(classify)
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        let mut conn = self.conn().await;
        let statement = conn.statement(&self.sql.read_order).await?;
        let rows = conn
            .client
            .query(&statement, &[&(order_id as i64)])
            .await
            .map_err(classify)?;
        order_from_joined(&rows, order_row, line_item)
    }

    async fn update_order(
        &self,
        order_id: OrderId,
        changes: &[ItemChange],
        subtotal_cents: i64,
    ) -> Result<Applied, DbError> {
        let mut conn = self.conn().await;
        let update_item = conn.statement(&self.sql.update_item).await?;
        let update_subtotal = conn.statement(&self.sql.update_subtotal).await?;
        let id = order_id as i64;
        let tx = conn.client.transaction().await.map_err(classify)?;
        for change in changes {
            let quantity = change.quantity as i32;
            let item_id = change.line_item_id as i64;
            tx.execute(
                &update_item,
                &[&change.colour, &change.size, &quantity, &item_id, &id],
            )
            .await
            .map_err(classify)?;
        }
        let rows = tx
            .execute(&update_subtotal, &[&subtotal_cents, &id])
            .await
            .map_err(classify)?;
        tx.commit().await.map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn update_status(
        &self,
        order_id: OrderId,
        status: OrderStatus,
    ) -> Result<Applied, DbError> {
        let mut conn = self.conn().await;
        let statement = conn.statement(&self.sql.update_status).await?;
        let rows = conn
            .client
            .execute(&statement, &[&status.as_str(), &(order_id as i64)])
            .await
            .map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        let mut conn = self.conn().await;
        let delete_items = conn.statement(&self.sql.delete_items).await?;
        let delete_order = conn.statement(&self.sql.delete_order).await?;
        let id = order_id as i64;
        let tx = conn.client.transaction().await.map_err(classify)?;
        tx.execute(&delete_items, &[&id]).await.map_err(classify)?;
        let rows = tx.execute(&delete_order, &[&id]).await.map_err(classify)?;
        tx.commit().await.map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        let conn = self.conn().await;
        let orders = conn
            .client
            .query(
                &format!("SELECT {ORDER_COLUMNS} FROM orders ORDER BY order_id"),
                &[],
            )
            .await
            .map_err(classify)?;
        let items = conn
            .client
            .query(
                &format!("SELECT {ITEM_COLUMNS}, order_id FROM line_items ORDER BY order_id, line_item_id"),
                &[],
            )
            .await
            .map_err(classify)?;
        snapshot_from(&orders, &items, order_row, line_item, |row| get(row, 6))
    }

    fn info(&self) -> StoreInfo {
        StoreInfo {
            name: "postgres".into(),
            server_version: self.version.clone(),
            settings: BTreeMap::from([
                ("pool".to_string(), self.connections.len().to_string()),
                (
                    "isolation".to_string(),
                    "read committed (server default)".to_string(),
                ),
            ]),
        }
    }
}
