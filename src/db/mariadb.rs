//! MariaDB (and MySQL) through `mysql_async`: a connection pool of `pool` connections
//! (default 4, the seed's choice), server-side prepared statements (cached per
//! connection), InnoDB, each write one transaction.
//!
//! Settings: `pool=N`. Affected-row counts use CLIENT_FOUND_ROWS, so an update that
//! writes the same value still counts as having found its order.

use std::collections::BTreeMap;
use std::time::Duration;

use mysql_async::prelude::*;
use mysql_async::{
    Conn, Opts, OptsBuilder, Params, Pool, PoolConstraints, PoolOpts, Row, TxOpts, Value,
};

use super::settings::Settings;
use super::sql::{
    ITEM_COLUMNS, ORDER_COLUMNS, Placeholders, Statements, order_from_joined, snapshot_from,
};
use super::{Applied, DbError, DbUrl, ErrorKind, OrderRow, Snapshot, StoreInfo};
use crate::workload::{ItemChange, LineItem, Order, OrderId, OrderStatus};

const SCHEMA: &[&str] = &[
    "DROP TABLE IF EXISTS line_items",
    "DROP TABLE IF EXISTS orders",
    "CREATE TABLE orders (
        order_id BIGINT PRIMARY KEY,
        client_id BIGINT NOT NULL,
        customer VARCHAR(100) NOT NULL,
        address VARCHAR(200) NOT NULL,
        created_at_ms BIGINT NOT NULL,
        status VARCHAR(20) NOT NULL,
        subtotal_cents BIGINT NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE line_items (
        line_item_id BIGINT PRIMARY KEY,
        order_id BIGINT NOT NULL,
        product VARCHAR(50) NOT NULL,
        colour VARCHAR(50) NOT NULL,
        size VARCHAR(10) NOT NULL,
        quantity INT NOT NULL,
        unit_price_cents BIGINT NOT NULL,
        KEY line_items_by_order (order_id),
        FOREIGN KEY (order_id) REFERENCES orders (order_id)
    ) ENGINE=InnoDB",
];

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_POOL: usize = 4;
/// Item inserts are prepared per item count; more than this many items go in chunks.
const MAX_ITEMS_PER_INSERT: usize = 100;

pub struct MariadbStore {
    pool: Pool,
    pool_size: usize,
    version: String,
    sql: Statements,
}

fn classify(error: mysql_async::Error) -> DbError {
    use mysql_async::Error as E;
    let kind = match &error {
        E::Server(server) => match server.code {
            1213 => ErrorKind::Conflict, // deadlock / certification failure
            1205 => ErrorKind::Timeout,  // lock wait timeout
            1047 | 1053 => ErrorKind::Unavailable, // node not ready, shutdown
            1062 | 1451 | 1452 => ErrorKind::Constraint, // duplicate key, foreign key
            1040 | 1044 | 1045 | 1049 => ErrorKind::Connection, // too many connections, access, no db
            _ => ErrorKind::Other,
        },
        E::Io(_) | E::Driver(_) => ErrorKind::Connection,
        _ => ErrorKind::Other,
    };
    DbError::new(kind, error.to_string())
}

fn order_row(row: &Row) -> Result<OrderRow, DbError> {
    let status: String = cell(row, 5)?;
    Ok(OrderRow {
        order_id: cell::<i64>(row, 0)? as u64,
        client_id: cell::<i64>(row, 1)? as u64,
        customer: cell(row, 2)?,
        address: cell(row, 3)?,
        created_at_ms: cell(row, 4)?,
        status: OrderStatus::parse(&status)
            .ok_or_else(|| DbError::new(ErrorKind::Other, format!("unknown status '{status}'")))?,
        subtotal_cents: cell(row, 6)?,
    })
}

/// Item columns starting at `at`; `None` when the item side of a LEFT JOIN is NULL.
fn line_item(row: &Row, at: usize) -> Result<Option<LineItem>, DbError> {
    let Some(id) = cell::<Option<i64>>(row, at)? else {
        return Ok(None);
    };
    Ok(Some(LineItem {
        line_item_id: id as u64,
        product: cell(row, at + 1)?,
        colour: cell(row, at + 2)?,
        size: cell(row, at + 3)?,
        quantity: cell::<i64>(row, at + 4)? as u32,
        unit_price_cents: cell(row, at + 5)?,
    }))
}

fn cell<T: FromValue>(row: &Row, index: usize) -> Result<T, DbError> {
    row.get_opt::<T, usize>(index)
        .and_then(Result::ok)
        .ok_or_else(|| {
            DbError::new(
                ErrorKind::Other,
                format!("unexpected value in column {index}"),
            )
        })
}

impl MariadbStore {
    pub async fn open(url: &DbUrl, settings: &Settings) -> Result<Self, DbError> {
        let mut reader = settings.reader("mysql");
        let pool_size: usize = reader
            .parsed("pool", "a number of connections")?
            .unwrap_or(DEFAULT_POOL);
        reader.finish(&["pool"])?;
        if pool_size == 0 {
            return Err(DbError::new(
                ErrorKind::Other,
                "mysql setting pool must be at least 1",
            ));
        }
        let address = url
            .address(3306)
            .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
        // Several hosts (Galera) come with a later issue; one host is used today.
        let (host, port) = address.hosts[0].clone();
        let opts = OptsBuilder::default()
            .ip_or_hostname(host)
            .tcp_port(port)
            .user(address.user.or(Some("root".into())))
            .pass(address.password)
            .db_name(address.name.or(Some("hatshop".into())))
            .client_found_rows(true)
            .stmt_cache_size(MAX_ITEMS_PER_INSERT + 16)
            .pool_opts(PoolOpts::default().with_constraints(
                PoolConstraints::new(pool_size, pool_size).expect("min == max is valid"),
            ));
        let pool = Pool::new(Opts::from(opts));
        let mut conn = tokio::time::timeout(CONNECT_TIMEOUT, pool.get_conn())
            .await
            .map_err(|_| {
                DbError::new(
                    ErrorKind::Timeout,
                    format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
                )
            })?
            .map_err(classify)?;
        let version: String = conn
            .query_first("SELECT VERSION()")
            .await
            .map_err(classify)?
            .unwrap_or_default();
        drop(conn);
        Ok(MariadbStore {
            pool,
            pool_size,
            version,
            sql: Statements::new(Placeholders::Question),
        })
    }

    async fn conn(&self) -> Result<Conn, DbError> {
        self.pool.get_conn().await.map_err(classify)
    }
}

impl super::Database for MariadbStore {
    async fn setup(&self) -> Result<(), DbError> {
        let mut conn = self.conn().await?;
        for statement in SCHEMA {
            conn.query_drop(*statement).await.map_err(classify)?;
        }
        drop(conn);
        // Hold every connection of the pool at once, so each one prepares (and caches)
        // the statements before anything is measured.
        let mut all = Vec::with_capacity(self.pool_size);
        for _ in 0..self.pool_size {
            all.push(self.conn().await?);
        }
        for conn in &mut all {
            for sql in self.sql.ahead() {
                conn.prep(sql).await.map_err(classify)?;
            }
        }
        Ok(())
    }

    async fn create_order(&self, order: &Order) -> Result<(), DbError> {
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .await
            .map_err(classify)?;
        tx.exec_drop(
            self.sql.insert_order.as_str(),
            (
                order.order_id as i64,
                order.client_id as i64,
                &order.customer,
                &order.address,
                order.created_at_ms,
                order.status.as_str(),
                order.subtotal_cents,
            ),
        )
        .await
        .map_err(classify)?;
        for chunk in order.items.chunks(MAX_ITEMS_PER_INSERT) {
            let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 7);
            for item in chunk {
                values.extend([
                    Value::from(item.line_item_id as i64),
                    Value::from(order.order_id as i64),
                    Value::from(item.product.as_str()),
                    Value::from(item.colour.as_str()),
                    Value::from(item.size.as_str()),
                    Value::from(item.quantity),
                    Value::from(item.unit_price_cents),
                ]);
            }
            tx.exec_drop(
                self.sql.insert_items(chunk.len()),
                Params::Positional(values),
            )
            .await
            .map_err(classify)?;
        }
        tx.commit().await.map_err(classify)
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        let mut conn = self.conn().await?;
        let rows: Vec<Row> = conn
            .exec(self.sql.read_order.as_str(), (order_id as i64,))
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
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .await
            .map_err(classify)?;
        for change in changes {
            tx.exec_drop(
                self.sql.update_item.as_str(),
                (
                    &change.colour,
                    &change.size,
                    change.quantity,
                    change.line_item_id as i64,
                    order_id as i64,
                ),
            )
            .await
            .map_err(classify)?;
        }
        tx.exec_drop(
            self.sql.update_subtotal.as_str(),
            (subtotal_cents, order_id as i64),
        )
        .await
        .map_err(classify)?;
        let rows = tx.affected_rows();
        tx.commit().await.map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn update_status(
        &self,
        order_id: OrderId,
        status: OrderStatus,
    ) -> Result<Applied, DbError> {
        let mut conn = self.conn().await?;
        conn.exec_drop(
            self.sql.update_status.as_str(),
            (status.as_str(), order_id as i64),
        )
        .await
        .map_err(classify)?;
        Ok(Applied::from_rows(conn.affected_rows()))
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        let mut conn = self.conn().await?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .await
            .map_err(classify)?;
        tx.exec_drop(self.sql.delete_items.as_str(), (order_id as i64,))
            .await
            .map_err(classify)?;
        tx.exec_drop(self.sql.delete_order.as_str(), (order_id as i64,))
            .await
            .map_err(classify)?;
        let rows = tx.affected_rows();
        tx.commit().await.map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        let mut conn = self.conn().await?;
        let orders: Vec<Row> = conn
            .query(format!(
                "SELECT {ORDER_COLUMNS} FROM orders ORDER BY order_id"
            ))
            .await
            .map_err(classify)?;
        let items: Vec<Row> = conn
            .query(format!(
                "SELECT {ITEM_COLUMNS}, order_id FROM line_items ORDER BY order_id, line_item_id"
            ))
            .await
            .map_err(classify)?;
        snapshot_from(&orders, &items, order_row, line_item, |row| cell(row, 6))
    }

    fn info(&self) -> StoreInfo {
        StoreInfo {
            name: "mariadb".into(),
            server_version: self.version.clone(),
            settings: BTreeMap::from([
                ("pool".to_string(), self.pool_size.to_string()),
                ("engine".to_string(), "InnoDB".to_string()),
                ("isolation".to_string(), "server default".to_string()),
            ]),
        }
    }
}
