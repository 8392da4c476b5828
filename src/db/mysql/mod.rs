//! MySQL and MariaDB through `mysql_async`: `connections` connections per host
//! (default one per lane; concurrency defaults to 4, the study's choice), server-side prepared
//! statements cached on every connection for its whole life (the pool does not reset
//! connections, which would empty the cache), InnoDB, each write one transaction.
//!
//! Several hosts in the URL (a Galera cluster) are all used: `route` sends each
//! operation to the next host in turn (the study's round-robin load balancing), always
//! to the first, or to one at random, and says which node served it. `sync_wait` sets
//! Galera's `wsrep_sync_wait` on every connection (1: a read waits for the writes
//! before it, on whichever node).
//!
//! Affected-row counts use CLIENT_FOUND_ROWS, so an update that writes the same value
//! still counts as having found its row. TCP only: the driver's switch to a local
//! socket is off, so every request takes the path the URL names.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use mysql_async::prelude::*;
use mysql_async::{Conn, Params, Pool, Row, Value as SqlValue};

use conns::{Held, HostConns, Kv};
use wire::Param;

mod bulk_load;
mod connect;
mod conns;
mod db_time;
mod errors;
mod initial_load;
mod login;
mod option_file;
mod rows;
mod sbtest;
mod wire;

use super::ownership::{self, Marker, Ownership, TABLES};
use super::peer_table;
use super::sql::{ITEM_COLUMNS, ORDER_COLUMNS, Statements, order_from_joined, setup_statements};
use super::{
    Applied, DbError, DeclaredStore, ErrorKind, KV_PAGE, KvPage, Snapshot, Store, StoreFacts,
};
use crate::workload::{ItemsUpdate, KeyText, Order, OrderId, OrderUpdate, StatusUpdate};
use errors::classify;
use rows::{cell, each_row, line_item, order_row};

const CREATE: &[&str] = &[
    "CREATE TABLE orders (
        order_id BIGINT PRIMARY KEY,
        client_id BIGINT NOT NULL,
        customer VARCHAR(100) NOT NULL,
        address VARCHAR(200) NOT NULL,
        created_at_ms BIGINT NOT NULL,
        status VARCHAR(20) NOT NULL,
        subtotal_cents BIGINT NOT NULL,
        payload MEDIUMTEXT NOT NULL
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

/// hatshop's own key-value table (`kv_table=kv`); `sbtest::CREATE` is the other shape.
const CREATE_KV: &str =
    "CREATE TABLE kv (k VARCHAR(32) PRIMARY KEY, v MEDIUMBLOB NOT NULL) ENGINE=InnoDB";

/// How long preparing on a Galera node waits for tables made on another one.
const GALERA_DDL_PATIENCE: Duration = Duration::from_secs(10);

/// Item inserts are prepared per item count; more than this many items go in chunks.
const MAX_ITEMS_PER_INSERT: usize = 100;

/// Which host an operation goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    RoundRobin,
    First,
    Random,
}

/// MySQL or MariaDB, one host or several (Galera), over mysql_async or hatshop's own wire.
pub struct MysqlStore {
    /// Each host's connections for operations, in the URL's order.
    conns: Vec<HostConns>,
    /// One small pool per host for setup and reading back.
    pools: Vec<(String, Pool)>,
    route: Route,
    next: AtomicU64,
    sync_wait: Option<u64>,
    /// Key-value records in sysbench's sbtest shape (`kv_table=sbtest`).
    sbtest: bool,
    /// Whether the server runs Galera (`wsrep_on`): verify then reads causally.
    galera: bool,
    target: String,
    version: String,
    sql: Statements,
    load: super::LoadSetup,
    /// Traced operations read their statements' times (`begin_db_timing` found
    /// performance_schema ready).
    server_timing: AtomicBool,
    /// The key-value statements go over hatshop's own wire (`kv_wire=own`, wire.rs).
    own_wire: bool,
    /// The TLS the connections speak.
    tls: connect::TlsInUse,
    /// Where the password came from (not the password).
    password_from: Option<String>,
}

impl MysqlStore {
    /// A connection to the host the route picks, and says which.
    async fn conn(&self) -> Result<Held, DbError> {
        let host = match (self.route, self.conns.len()) {
            (_, 1) | (Route::First, _) => 0,
            (Route::RoundRobin, n) => {
                (self.next.fetch_add(1, Ordering::Relaxed) % n as u64) as usize
            }
            (Route::Random, n) => {
                let mut state = self.next.fetch_add(1, Ordering::Relaxed);
                (crate::workload::splitmix64(&mut state) % n as u64) as usize
            }
        };
        super::served_by(host + 1);
        super::queued(self.conns[host].take()).await.map_err(|e| {
            // No connection, so nothing was sent: the operation did not happen.
            let kind = match e.kind {
                ErrorKind::Connection => ErrorKind::Unavailable,
                kind => kind,
            };
            DbError { kind, ..e }
        })
    }

    /// The key as its statements bind it: the key text, or sbtest's INT id.
    fn key_param<'k>(&self, key: &'k KeyText) -> Result<Param<'k>, DbError> {
        Ok(if self.sbtest {
            Param::Int(sbtest::TABLE.id(key)?)
        } else {
            Param::Bytes(key.as_str().as_bytes())
        })
    }

    /// The value to bind, after sbtest's check that `c` holds it.
    fn value_param<'v>(&self, value: &'v [u8]) -> Result<&'v [u8], DbError> {
        if self.sbtest {
            sbtest::TABLE.check_value_size(value.len())?;
        }
        Ok(value)
    }

    /// A connection to the first host that answers, for setup and reading back: on a
    /// Galera node, reads wait until the node has applied every write before them.
    async fn admin_conn(&self) -> Result<Conn, DbError> {
        let mut last = None;
        for (host, pool) in &self.pools {
            match login::login_retried(|| pool.get_conn()).await {
                Ok(mut conn) => {
                    if self.galera {
                        conn.query_drop("SET SESSION wsrep_sync_wait = 1")
                            .await
                            .map_err(classify)?;
                    }
                    return Ok(conn);
                }
                Err(e) => last = Some(classify(e).context(format!("host {host}"))),
            }
        }
        Err(last.expect("a host"))
    }

    /// Done with `conn` after an operation of `statements` statements: a traced one
    /// leaves it to the lane's follow-up, which reads their times on the server.
    fn done(&self, conn: Held, statements: usize) {
        if super::tracing_wanted() && self.server_timing.load(Ordering::Relaxed) {
            super::follow_up(Box::pin(db_time::last_statements(conn, statements)));
        }
    }

    async fn existing_tables(&self, conn: &mut Conn) -> Result<Vec<String>, DbError> {
        let names: Vec<String> = conn
            .query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()",
            )
            .await
            .map_err(classify)?;
        Ok(names
            .into_iter()
            .filter(|n| TABLES.contains(&n.as_str()))
            .collect())
    }

    /// Opens every connection of every host again, each preparing (and caching) the
    /// statements before anything is measured.
    async fn prepare_everywhere(&self) -> Result<(), DbError> {
        let statements = self.sql.ahead();
        // CI met a Galera node that had not yet made the tables another node had just
        // made (1146 when preparing on it).
        let patience = if self.galera {
            GALERA_DDL_PATIENCE
        } else {
            Duration::ZERO
        };
        let kv = self.sql.kv();
        for host in &self.conns {
            host.reopen_all(&statements, kv, patience).await?;
        }
        Ok(())
    }
}

impl Store for MysqlStore {
    /// From 2 lanes up over hatshop's own wire: point selects ran 1.5 to 2 times as
    /// fast at 2 to 4, and as fast or faster above, for less CPU each; inserts, bound
    /// by the server, within 5 % either way (bench/NOTES.md).
    fn lane_threads(&self, concurrency: usize) -> bool {
        self.own_wire && concurrency >= 2
    }

    async fn setup(&self, owner: &Ownership) -> Result<(), DbError> {
        let mut conn = self.admin_conn().await?;
        let existing = self.existing_tables(&mut conn).await?;
        let kv = if self.sbtest {
            sbtest::CREATE
        } else {
            CREATE_KV
        };
        let create: Vec<&str> = CREATE.iter().copied().chain([kv]).collect();
        for statement in setup_statements(&self.target, owner, &existing, &create, "VARCHAR(255)")?
        {
            conn.query_drop(statement).await.map_err(classify)?;
        }
        drop(conn);
        self.prepare_everywhere().await
    }

    async fn close(&self) {
        for host in &self.conns {
            host.close_all().await;
        }
        for (_, pool) in &self.pools {
            let _ = pool.clone().disconnect().await;
        }
    }

    async fn use_existing(&self) -> Result<(), DbError> {
        self.check_owned().await?;
        self.prepare_everywhere().await
    }

    async fn check_owned(&self) -> Result<Marker, DbError> {
        let mut conn = self.admin_conn().await?;
        ownership::check_marked(&self.target, &self.existing_tables(&mut conn).await?)?;
        let made_by: Option<String> = conn
            .query_first(ownership::READ_MARKER)
            .await
            .map_err(classify)?;
        Ok(Marker {
            made_by: made_by.unwrap_or_default(),
        })
    }

    async fn holding(&self) -> Result<Option<String>, DbError> {
        let mut conn = self.admin_conn().await?;
        conn.query_first(ownership::READ_HOLDING)
            .await
            .map_err(classify)
    }

    async fn write_holding(&self, note: &str) -> Result<(), DbError> {
        let mut conn = self.admin_conn().await?;
        conn.query_drop(ownership::CLEAR_HOLDING)
            .await
            .map_err(classify)?;
        conn.exec_drop(ownership::write_holding("?"), (note,))
            .await
            .map_err(classify)
    }

    async fn create_order(&self, order: &Order, payload: &str) -> Result<(), DbError> {
        let mut held = self.conn().await?;
        let mut tx = held.transaction().await?;
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
                payload,
            ),
        )
        .await
        .map_err(classify)?;
        for chunk in order.items.chunks(MAX_ITEMS_PER_INSERT) {
            let mut values: Vec<SqlValue> = Vec::with_capacity(chunk.len() * 7);
            for item in chunk {
                values.extend([
                    SqlValue::from(item.line_item_id as i64),
                    SqlValue::from(order.order_id as i64),
                    SqlValue::from(&*item.product),
                    SqlValue::from(&*item.colour),
                    SqlValue::from(&*item.size),
                    SqlValue::from(item.quantity),
                    SqlValue::from(item.unit_price_cents),
                ]);
            }
            tx.exec_drop(
                self.sql.insert_items(chunk.len()),
                Params::Positional(values),
            )
            .await
            .map_err(classify)?;
        }
        tx.commit().await.map_err(classify)?;
        let inserts = 1 + order.items.len().div_ceil(MAX_ITEMS_PER_INSERT);
        self.done(held, inserts + 2);
        Ok(())
    }

    /// Multi-row INSERTs, a transaction per batch (initial_load.rs).
    async fn load_initial(&self, batch: &super::InitialBatch<'_>) -> Result<(), DbError> {
        self.insert_initial(batch).await
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        let mut held = self.conn().await?;
        let conn = held.driver()?;
        let rows: Vec<Row> = conn
            .exec(self.sql.read_order.as_str(), (order_id as i64,))
            .await
            .map_err(classify)?;
        self.done(held, 1);
        order_from_joined(&rows, order_row, line_item)
    }

    async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let mut held = self.conn().await?;
        let conn = held.driver()?;
        conn.exec_drop(
            self.sql.update_order.as_str(),
            (
                update.created_at_ms,
                update.status.as_str(),
                update.subtotal_cents,
                order_id as i64,
            ),
        )
        .await
        .map_err(classify)?;
        let rows = conn.affected_rows();
        self.done(held, 1);
        Ok(Applied::from_rows(rows))
    }

    async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let mut held = self.conn().await?;
        let mut tx = held.transaction().await?;
        for change in update.changes {
            tx.exec_drop(
                self.sql.update_item.as_str(),
                (
                    &*change.colour,
                    &*change.size,
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
            (update.subtotal_cents, order_id as i64),
        )
        .await
        .map_err(classify)?;
        let rows = tx.affected_rows();
        tx.commit().await.map_err(classify)?;
        self.done(held, update.changes.len() + 3);
        Ok(Applied::from_rows(rows))
    }

    async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
        let StatusUpdate { order_id, status } = update;
        let mut held = self.conn().await?;
        let conn = held.driver()?;
        conn.exec_drop(
            self.sql.update_status.as_str(),
            (status.as_str(), order_id as i64),
        )
        .await
        .map_err(classify)?;
        let rows = conn.affected_rows();
        self.done(held, 1);
        Ok(Applied::from_rows(rows))
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        let mut held = self.conn().await?;
        let mut tx = held.transaction().await?;
        tx.exec_drop(self.sql.delete_items.as_str(), (order_id as i64,))
            .await
            .map_err(classify)?;
        tx.exec_drop(self.sql.delete_order.as_str(), (order_id as i64,))
            .await
            .map_err(classify)?;
        let rows = tx.affected_rows();
        tx.commit().await.map_err(classify)?;
        self.done(held, 4);
        Ok(Applied::from_rows(rows))
    }

    async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
        let value = self.value_param(value)?;
        let (sbtest_row, kv_row);
        let params: &[Param] = if self.sbtest {
            let id = sbtest::TABLE.id(key)?;
            sbtest_row = [
                Param::Int(id),
                Param::Int(sbtest::k_of(id)),
                Param::Bytes(value),
                Param::Bytes(sbtest::PAD.as_bytes()),
            ];
            &sbtest_row
        } else {
            kv_row = [Param::Bytes(key.as_str().as_bytes()), Param::Bytes(value)];
            &kv_row
        };
        let mut conn = self.conn().await?;
        conn.kv(Kv::Insert, &self.sql.kv_insert, params).await?;
        self.done(conn, 1);
        Ok(())
    }

    async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
        let params = [Param::Bytes(self.value_param(value)?), self.key_param(key)?];
        let mut conn = self.conn().await?;
        let reply = conn.kv(Kv::Update, &self.sql.kv_update, &params).await?;
        self.done(conn, 1);
        Ok(Applied::from_rows(reply.affected))
    }

    async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        let params = [self.key_param(key)?];
        let mut conn = self.conn().await?;
        let reply = conn.kv(Kv::Select, &self.sql.kv_select, &params).await?;
        self.done(conn, 1);
        Ok(reply.value)
    }

    async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
        let params = [self.key_param(key)?];
        let mut conn = self.conn().await?;
        let reply = conn.kv(Kv::Delete, &self.sql.kv_delete, &params).await?;
        self.done(conn, 1);
        Ok(Applied::from_rows(reply.affected))
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        let mut conn = self.admin_conn().await?;
        let mut snapshot = Snapshot::default();
        let orders = format!("SELECT {ORDER_COLUMNS} FROM orders ORDER BY order_id");
        each_row(&mut conn, orders, |row| {
            snapshot.orders.push(order_row(&row)?);
            Ok(())
        })
        .await?;
        let items = format!(
            "SELECT {ITEM_COLUMNS}, order_id FROM line_items ORDER BY order_id, line_item_id"
        );
        each_row(&mut conn, items, |row| {
            let item = line_item(&row, 0)?.expect("line_item_id is NOT NULL");
            snapshot.items.push((cell::<i64>(&row, 6)? as u64, item));
            Ok(())
        })
        .await?;
        Ok(snapshot)
    }

    async fn kv_page(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        let after = String::from_utf8(cursor.unwrap_or_default()).unwrap_or_default();
        let mut conn = self.admin_conn().await?;
        let (records, last): (Vec<(String, Vec<u8>)>, Option<String>) = if self.sbtest {
            // Ids are read in order; the cursor is the last one's number.
            let after: i64 = after.parse().unwrap_or(-1);
            let rows: Vec<(i64, Vec<u8>)> = conn
                .exec(self.sql.kv_page.as_str(), (after,))
                .await
                .map_err(classify)?;
            let last = rows.last().map(|(id, _)| id.to_string());
            let records = rows.into_iter().map(|(id, c)| peer_table::record(id, c));
            (records.collect(), last)
        } else {
            let records: Vec<(String, Vec<u8>)> = conn
                .exec(self.sql.kv_page.as_str(), (after,))
                .await
                .map_err(classify)?;
            let last = records.last().map(|(k, _)| k.clone());
            (records, last)
        };
        let next = (records.len() == KV_PAGE).then_some(last).flatten();
        Ok(KvPage {
            records,
            next: next.map(String::into_bytes),
        })
    }

    fn facts(&self) -> StoreFacts {
        let hosts: Vec<&str> = self.pools.iter().map(|(h, _)| h.as_str()).collect();
        let mut settings = BTreeMap::from([
            // Connections per host.
            ("connections".to_string(), self.conns[0].len().to_string()),
            ("engine".to_string(), "InnoDB".to_string()),
            ("isolation".to_string(), "server default".to_string()),
            ("hosts".to_string(), hosts.join(",")),
            ("galera".to_string(), self.galera.to_string()),
        ]);
        if self.pools.len() > 1 {
            let route = match self.route {
                Route::RoundRobin => "round-robin",
                Route::First => "first",
                Route::Random => "random",
            };
            settings.insert("route".into(), route.into());
        }
        if let Some(wait) = self.sync_wait {
            settings.insert("sync_wait".into(), wait.to_string());
        }
        if self.sbtest {
            settings.insert(peer_table::SETTING.into(), sbtest::TABLE.name.into());
        }
        let wire = if self.own_wire { "own" } else { "mysql_async" };
        settings.insert("kv_wire".into(), wire.into());
        StoreFacts::logged_in(
            Self::DECLARED.scheme,
            &self.version,
            settings,
            self.tls.describe(),
            self.password_from.as_deref(),
        )
    }
}
