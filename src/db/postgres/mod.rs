//! PostgreSQL through `tokio-postgres`: `connections` connections (default 4), each with its
//! statements prepared once, each write one transaction. A connection the server
//! closed (a restart, a killed backend) is opened again on its next use, with its
//! statements prepared again (pool.rs); that one operation pays for it. In a run of
//! key-value events alone the key-value statements go over hatshop's own wire instead
//! (lean.rs, wire/), and the driver keeps one connection for setup and verify. Both
//! log in as libpq would (libpq.rs: the URL, the PG* variables, ~/.pgpass; TLS by
//! sslmode, tls.rs for the driver).

mod bulk_load;
mod environment;
mod errors;
mod initial_load;
mod lean;
mod libpq;
mod pgbench;
mod pgpass;
mod pool;
mod read_back;
mod rows;
mod service;
mod statement_times;
mod tables;
mod tls;
mod vacuum;
mod wire;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Duration;

use tokio::sync::Mutex;
use tokio_postgres::types::ToSql;

use self::errors::classify;
use self::lean::{Kv, LeanConns, lean_conns};
use self::pool::PgConn;
use self::rows::{get, line_item, order_row};
use self::wire::Reply;
use super::ownership::{self, Marker, Ownership};
use super::peer_table;
use super::sql::{Placeholders, Statements, order_from_joined};
use super::{
    Applied, ConnectOptions, DbError, DbUrl, DeclaredStore, ErrorKind, InitialBatch, KvPage,
    Setting, Snapshot, Store, StoreDeclarations, StoreFacts, Value,
};
use crate::workload::{ItemsUpdate, KeyText, Order, OrderId, OrderUpdate, StatusUpdate};

/// A key as the key-value statements bind it: its text, or pgbench_accounts' INT aid.
enum KeyParam<'a> {
    Text(&'a str),
    Aid { aid: i32, wire: [u8; 4] },
}

impl KeyParam<'_> {
    /// In binary, for hatshop's own wire.
    fn wire(&self) -> &[u8] {
        match self {
            KeyParam::Text(text) => text.as_bytes(),
            KeyParam::Aid { wire, .. } => wire,
        }
    }

    /// For tokio-postgres.
    fn sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            KeyParam::Text(text) => text,
            KeyParam::Aid { aid, .. } => aid,
        }
    }
}

/// PostgreSQL over tokio-postgres: a few connections, each with its statements prepared.
pub struct PostgresStore {
    config: tokio_postgres::Config,
    /// TLS as sslmode asks (`None`: disable), and what the driver's connections spoke.
    tls: Option<Arc<crate::db::tls::Tls>>,
    tls_seen: tls::Seen,
    /// Where the password came from (not the password).
    password_from: Option<String>,
    connect_timeout: Duration,
    connections: Vec<Mutex<Option<PgConn>>>,
    next: AtomicUsize,
    /// Set once setup made the tables: new connections then prepare every statement.
    tables_ready: AtomicBool,
    /// Set while the tables wait for the keys a setup for a load left out.
    keys_deferred: AtomicBool,
    /// Load batches written at once: one per core (initial_load.rs).
    load_turns: tokio::sync::Semaphore,
    target: String,
    version: String,
    sql: Statements,
    load: super::LoadSetup,
    /// pg_stat_statements' totals when server timing began (`--trace-sample`).
    statements_before: std::sync::Mutex<Option<statement_times::Totals>>,
    /// Set in runs of key-value events alone where the own wire can log in: the
    /// key-value statements then go over hatshop's own wire (wire/).
    lean: Option<LeanConns>,
    /// Key-value records in pgbench's pgbench_accounts shape (`kv_table=pgbench_accounts`).
    pgbench: bool,
}

/// The settings PostgreSQL takes (URL `?key=value` or flags).
const SETTINGS: &[Setting] = &[
    super::sql::CONNECTIONS,
    Setting {
        name: peer_table::SETTING,
        value: Value::Choice(&["kv", pgbench::TABLE.name]),
        default: "kv",
        help: "key-value records in hatshop's table (k TEXT, v BYTEA) or in pgbench's pgbench_accounts shape (aid INT, bid INT, abalance INT, filler BYTEA holding the value, at most 84 bytes), for the race with pgbench",
    },
    Setting {
        name: "kv_wire",
        value: Value::Choice(&["own", "tokio-postgres"]),
        default: "own",
        help: "in runs of key-value events alone, send the statements over hatshop's own lean client of the extended query protocol (TLS, and trust, password, MD5 or SCRAM-SHA-256 logins) or through tokio-postgres, as every other run does",
    },
    libpq::SETTINGS[0],
    libpq::SETTINGS[1],
    libpq::SETTINGS[2],
    libpq::SETTINGS[3],
    libpq::SETTINGS[4],
];

impl DeclaredStore for PostgresStore {
    const DECLARED: StoreDeclarations = StoreDeclarations {
        aliases: &["postgresql"],
        login: true,
        db_time: Some(statement_times::DB_TIME),
        // A COPY of 10,000 rows loaded a million pgbench rows in 1.6 s, of 1,000 in
        // 2.1 s; MariaDB's INSERTs and Redis's pipelines gained nothing (bench/NOTES.md).
        initial_load_batch: 10_000,
        // One from 16 lanes up: there one thread read as fast as two, for 10–25 % less
        // CPU per read, and ran orders as fast; at 4, two read 7 % more (bench/NOTES.md).
        client_threads: |concurrency| (concurrency >= 16).then_some(1),
        // pgbench's `pgbench_accounts` shape holds values of at most 84 bytes.
        check_value_size: |settings, len| {
            if pgbench::TABLE.chosen(settings) {
                pgbench::TABLE.check_value_size(len)?;
            }
            Ok(())
        },
        ..StoreDeclarations::new(
            "postgres",
            "PostgreSQL",
            "postgres://postgres@127.0.0.1:5432/hatshop?connections=4",
            SETTINGS,
            |settings| super::sql::connections_or(settings, 4),
        )
    };

    async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let pool = super::sql::connections_or(&options.settings, options.concurrency);
        let address = url
            .address(5432)
            .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
        let (host, port) = address.hosts[0].clone();
        let libpq::PgLogin { login, database } =
            libpq::login(&address, &options.settings, &libpq::ProcessEnvironment)?;
        let tls = login.tls.client(&host, port)?;
        let config = driver_config((&host, port, &database), &login, tls.as_ref(), options);
        let pgbench = pgbench::TABLE.chosen(&options.settings);
        let mut sql = Statements::new(Placeholders::Dollar);
        if pgbench {
            pgbench::statements(&mut sql);
        }
        let tls_seen = tls::Seen::default();
        let own_wire = options.key_value_only && options.settings.choice("kv_wire") == "own";
        let lean = match own_wire {
            true => {
                let login = wire::Login {
                    host: host.clone(),
                    port,
                    user: login.user.clone(),
                    password: login.password.clone(),
                    database: database.clone(),
                    connect_timeout: options.connect_timeout,
                    tls: tls.clone(),
                };
                let lean = lean_conns(login, &sql, pool).await?;
                lean.map(|(conns, spoke)| {
                    tls_seen.saw(spoke);
                    conns
                })
            }
            false => None,
        };
        let mut store = PostgresStore {
            config,
            tls: tls.map(Arc::new),
            tls_seen,
            password_from: login.password_from,
            connect_timeout: options.connect_timeout,
            // With hatshop's own wire carrying the operations, the driver's one
            // connection does setup and verify.
            connections: (0..if lean.is_some() { 1 } else { pool })
                .map(|_| Mutex::new(None))
                .collect(),
            next: AtomicUsize::new(0),
            tables_ready: AtomicBool::new(false),
            keys_deferred: AtomicBool::new(false),
            load_turns: tokio::sync::Semaphore::new(crate::procfs::cores()),
            target: url.to_string(),
            version: String::new(),
            sql,
            load: Default::default(),
            statements_before: Default::default(),
            lean,
            pgbench,
        };
        store.version = store.server_version().await?;
        Ok(store)
    }
}

/// The driver's settings for the server at `(host, port, database)`, with the login
/// and TLS asked.
fn driver_config(
    (host, port, database): (&str, u16, &str),
    login: &crate::db::login::Login,
    tls: Option<&crate::db::tls::Tls>,
    options: &ConnectOptions,
) -> tokio_postgres::Config {
    let mut config = tokio_postgres::Config::new();
    config
        .host(host)
        .port(port)
        .user(&login.user)
        .dbname(database)
        .connect_timeout(options.connect_timeout)
        .keepalives(true)
        .ssl_mode(match tls.map(|tls| tls.mode) {
            None => tokio_postgres::config::SslMode::Disable,
            Some(crate::db::tls::TlsMode::Prefer) => tokio_postgres::config::SslMode::Prefer,
            Some(_) => tokio_postgres::config::SslMode::Require,
        });
    if let Some(password) = &login.password {
        config.password(password);
    }
    config
}

impl PostgresStore {
    /// `PostgreSQL 17.2`, as the server names its version.
    async fn server_version(&self) -> Result<String, DbError> {
        let conn = self.conn().await?;
        let row = conn
            .client
            .query_one("SHOW server_version", &[])
            .await
            .map_err(classify)?;
        let version: String = get(&row, 0)?;
        Ok(format!(
            "PostgreSQL {}",
            version.split_whitespace().next().unwrap_or(&version)
        ))
    }

    /// The key as the key-value statements bind it.
    fn key_param<'a>(&self, key: &'a KeyText) -> Result<KeyParam<'a>, DbError> {
        if !self.pgbench {
            return Ok(KeyParam::Text(key.as_str()));
        }
        let aid = pgbench::TABLE.id(key)? as i32;
        Ok(KeyParam::Aid {
            aid,
            wire: aid.to_be_bytes(),
        })
    }

    /// The value to bind, after pgbench_accounts' check that `filler` holds it.
    fn value_param<'a>(&self, value: &'a [u8]) -> Result<&'a [u8], DbError> {
        if self.pgbench {
            pgbench::TABLE.check_value_size(value.len())?;
        }
        Ok(value)
    }

    /// A key-value statement, over hatshop's own wire where it carries them, else over
    /// tokio-postgres (`on_driver`: the same parameters as it binds them).
    async fn kv(
        &self,
        which: Kv,
        params: &[&[u8]],
        on_driver: &[&(dyn ToSql + Sync)],
    ) -> Result<Reply, DbError> {
        match &self.lean {
            Some(lean) => lean.run(which, params).await,
            // Boxed: inline, tokio-postgres's future made every key-value call's future
            // several times the own wire's, and each call copies its whole future
            // into the heap (`AnyStore`), the own wire's calls too (bench/NOTES.md).
            None => Box::pin(self.kv_on_driver(which, on_driver)).await,
        }
    }

    /// A key-value statement over tokio-postgres.
    async fn kv_on_driver(
        &self,
        which: Kv,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Reply, DbError> {
        let mut conn = self.conn().await?;
        let statement = conn.statement(self.sql.kv()[which as usize]).await?;
        if let Kv::Select = which {
            let row = conn.client.query_opt(&statement, params).await;
            let value = row.map_err(classify)?.map(|r| get::<Vec<u8>>(&r, 0));
            let value = value.transpose()?;
            return Ok(Reply {
                rows: u64::from(value.is_some()),
                value,
            });
        }
        let rows = conn.client.execute(&statement, params).await;
        Ok(Reply {
            rows: rows.map_err(classify)?,
            value: None,
        })
    }
}

impl Store for PostgresStore {
    /// From 2 lanes up over hatshop's own wire: from 2 to 16 they read 1.3 to 2 times
    /// as fast, for 15–50 % less CPU per read, and at 32, 64 and 256 3–28 % faster, at
    /// a CPU per read within 10 % either way; at 1 the shared runtime was faster
    /// (bench/NOTES.md).
    fn lane_threads(&self, concurrency: usize) -> bool {
        self.lean.is_some() && concurrency >= 2
    }

    async fn setup(&self, owner: &Ownership) -> Result<(), DbError> {
        self.make_tables(owner, tables::Keys::Now).await
    }

    /// The tables without their keys (tables.rs), which `key_loaded` adds.
    async fn setup_for_load(&self, owner: &Ownership) -> Result<(), DbError> {
        self.make_tables(owner, tables::Keys::AfterLoad).await
    }

    async fn key_loaded(&self) -> Result<Option<&'static str>, DbError> {
        self.add_keys().await
    }

    async fn use_existing(&self) -> Result<(), DbError> {
        self.check_owned().await?;
        self.prepare_everywhere().await
    }

    /// VACUUM (ANALYZE) of hatshop's tables (`vacuum`).
    async fn tidy_loaded(&self) -> Result<Option<&'static str>, DbError> {
        vacuum::vacuum_loaded(self).await.map(Some)
    }

    async fn check_owned(&self) -> Result<Marker, DbError> {
        let conn = self.conn().await?;
        ownership::check_marked(&self.target, &self.existing_tables(&conn).await?)?;
        let row = conn
            .client
            .query_opt(ownership::READ_MARKER, &[])
            .await
            .map_err(classify)?;
        Ok(Marker {
            made_by: match row {
                Some(row) => get(&row, 0)?,
                None => String::new(),
            },
        })
    }

    async fn holding(&self) -> Result<Option<String>, DbError> {
        let conn = self.conn().await?;
        let row = conn
            .client
            .query_opt(ownership::READ_HOLDING, &[])
            .await
            .map_err(classify)?;
        row.map(|row| get(&row, 0)).transpose()
    }

    async fn write_holding(&self, note: &str) -> Result<(), DbError> {
        let conn = self.conn().await?;
        let write = ownership::write_holding("$1");
        conn.client
            .batch_execute(ownership::CLEAR_HOLDING)
            .await
            .map_err(classify)?;
        conn.client
            .execute(write.as_str(), &[&note])
            .await
            .map_err(classify)
            .map(drop)
    }

    async fn create_order(&self, order: &Order, payload: &str) -> Result<(), DbError> {
        let mut conn = self.conn().await?;
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
                &payload,
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
        if !params.is_empty() {
            tx.execute(&insert_items, &params).await.map_err(classify)?;
        }
        tx.commit().await.map_err(classify)
    }

    /// COPY, a transaction per batch (initial_load.rs).
    async fn load_initial(&self, batch: &InitialBatch<'_>) -> Result<(), DbError> {
        self.copy_initial(batch).await
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        let mut conn = self.conn().await?;
        let statement = conn.statement(&self.sql.read_order).await?;
        let rows = conn
            .client
            .query(&statement, &[&(order_id as i64)])
            .await
            .map_err(classify)?;
        order_from_joined(&rows, order_row, line_item)
    }

    async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let mut conn = self.conn().await?;
        let statement = conn.statement(&self.sql.update_order).await?;
        let rows = conn
            .client
            .execute(
                &statement,
                &[
                    &update.created_at_ms,
                    &update.status.as_str(),
                    &update.subtotal_cents,
                    &(order_id as i64),
                ],
            )
            .await
            .map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let mut conn = self.conn().await?;
        let update_item = conn.statement(&self.sql.update_item).await?;
        let update_subtotal = conn.statement(&self.sql.update_subtotal).await?;
        let id = order_id as i64;
        let tx = conn.client.transaction().await.map_err(classify)?;
        for change in update.changes {
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
            .execute(&update_subtotal, &[&update.subtotal_cents, &id])
            .await
            .map_err(classify)?;
        tx.commit().await.map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
        let StatusUpdate { order_id, status } = update;
        let mut conn = self.conn().await?;
        let statement = conn.statement(&self.sql.update_status).await?;
        let rows = conn
            .client
            .execute(&statement, &[&status.as_str(), &(order_id as i64)])
            .await
            .map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        let mut conn = self.conn().await?;
        let delete_items = conn.statement(&self.sql.delete_items).await?;
        let delete_order = conn.statement(&self.sql.delete_order).await?;
        let id = order_id as i64;
        let tx = conn.client.transaction().await.map_err(classify)?;
        tx.execute(&delete_items, &[&id]).await.map_err(classify)?;
        let rows = tx.execute(&delete_order, &[&id]).await.map_err(classify)?;
        tx.commit().await.map_err(classify)?;
        Ok(Applied::from_rows(rows))
    }

    async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
        let (key, value) = (self.key_param(key)?, self.value_param(value)?);
        let params = [key.wire(), value];
        let on_driver: [&(dyn ToSql + Sync); 2] = [key.sql(), &value];
        self.kv(Kv::Insert, &params, &on_driver).await.map(|_| ())
    }

    async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
        let (key, value) = (self.key_param(key)?, self.value_param(value)?);
        let params = [value, key.wire()];
        let on_driver: [&(dyn ToSql + Sync); 2] = [&value, key.sql()];
        let reply = self.kv(Kv::Update, &params, &on_driver).await?;
        Ok(Applied::from_rows(reply.rows))
    }

    async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        let key = self.key_param(key)?;
        let reply = self.kv(Kv::Select, &[key.wire()], &[key.sql()]).await?;
        Ok(reply.value)
    }

    async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
        let key = self.key_param(key)?;
        let reply = self.kv(Kv::Delete, &[key.wire()], &[key.sql()]).await?;
        Ok(Applied::from_rows(reply.rows))
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        self.read_back().await
    }

    async fn kv_page(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        self.kv_page_from(cursor).await
    }

    fn facts(&self) -> StoreFacts {
        let connections = self
            .lean
            .as_ref()
            .map_or(self.connections.len(), LeanConns::len);
        let kv_wire = if self.lean.is_some() {
            "own"
        } else {
            "tokio-postgres"
        };
        let mut settings = BTreeMap::from([
            ("connections".to_string(), connections.to_string()),
            (
                "isolation".to_string(),
                "read committed (server default)".to_string(),
            ),
            ("kv_wire".to_string(), kv_wire.to_string()),
        ]);
        if self.pgbench {
            settings.insert(peer_table::SETTING.into(), pgbench::TABLE.name.into());
        }
        StoreFacts::logged_in(
            Self::DECLARED.scheme,
            &self.version,
            settings,
            self.tls_seen.describe(self.tls.as_deref()),
            self.password_from.as_deref(),
        )
    }

    async fn close(&self) {
        if let Some(lean) = &self.lean {
            lean.close_all().await;
        }
    }
}
