//! Databases behind one small trait in domain words, one file per database.
//!
//! Bindings never see a clock or a histogram: the runner times each call from the
//! outside. Driver crates are used only inside their own file.

mod cassandra;
mod error;
mod mariadb;
mod null;
mod postgres;
mod settings;
mod sql;
mod sqlite;
mod url;

use std::collections::BTreeMap;
use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::workload::{ItemChange, LineItem, Order, OrderId, OrderStatus};

pub use cassandra::CassandraStore;
pub use error::{DbError, ErrorKind};
pub use mariadb::MariadbStore;
pub use null::NullStore;
pub use postgres::PostgresStore;
pub use settings::Settings;
pub use sqlite::SqliteStore;
pub use url::{DbUrl, Scheme, mask_password};

/// Whether a write found the order it targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    Yes,
    /// The order was not there; nothing changed.
    NotFound,
    /// The store cannot tell (e.g. a blind upsert).
    Unknown,
}

impl Applied {
    /// From the number of order rows a statement matched.
    pub fn from_rows(rows: u64) -> Applied {
        if rows == 0 {
            Applied::NotFound
        } else {
            Applied::Yes
        }
    }
}

/// An order row without its items, as read back for verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRow {
    pub order_id: OrderId,
    pub client_id: u64,
    pub customer: String,
    pub address: String,
    pub created_at_ms: i64,
    pub status: OrderStatus,
    pub subtotal_cents: i64,
}

/// Everything the store holds, table by table, so that orphan items show up too.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub orders: Vec<OrderRow>,
    pub items: Vec<(OrderId, LineItem)>,
}

/// What a run records about the store: name, server version, settings that matter.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreInfo {
    pub name: String,
    pub server_version: String,
    pub settings: BTreeMap<String, String>,
}

/// How a store should open its connections.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Lanes that will call the store at once.
    pub concurrency: usize,
    /// `?key=value` from the URL with command-line overrides; each store checks its own.
    pub settings: Settings,
}

/// One database, as the runner and `verify` see it.
///
/// Methods return `Send` futures so the runner can spawn one task per lane.
pub trait Database: Send + Sync + 'static {
    /// Drops and recreates hatshop's tables: every run starts from an empty store.
    fn setup(&self) -> impl Future<Output = Result<(), DbError>> + Send;

    fn create_order(&self, order: &Order) -> impl Future<Output = Result<(), DbError>> + Send;

    fn read_order(
        &self,
        order_id: OrderId,
    ) -> impl Future<Output = Result<Option<Order>, DbError>> + Send;

    fn update_order(
        &self,
        order_id: OrderId,
        changes: &[ItemChange],
        subtotal_cents: i64,
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    fn update_status(
        &self,
        order_id: OrderId,
        status: OrderStatus,
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    fn delete_order(
        &self,
        order_id: OrderId,
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    /// Reads every order and line item back, for `verify`.
    fn snapshot(&self) -> impl Future<Output = Result<Snapshot, DbError>> + Send;

    fn info(&self) -> StoreInfo;

    /// False for stores that keep nothing (null://): reads are then not checked.
    fn holds_data(&self) -> bool {
        true
    }
}

/// The store picked by the URL: an enum at the edge, generic code inside.
pub enum Store {
    Sqlite(SqliteStore),
    Null(NullStore),
    // Boxed: the session is large, and the enum is moved around whole.
    Cassandra(Box<CassandraStore>),
    Mariadb(MariadbStore),
    Postgres(PostgresStore),
}

impl Store {
    /// Opens the store named by `url`.
    pub async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<Store, DbError> {
        let settings = &options.settings;
        Ok(match url.scheme {
            Scheme::Sqlite => Store::Sqlite(SqliteStore::open(url, options)?),
            Scheme::Null => {
                settings.reader("null").finish(&[])?;
                Store::Null(NullStore)
            }
            Scheme::Cassandra => {
                Store::Cassandra(Box::new(CassandraStore::open(url, settings).await?))
            }
            Scheme::Mysql => Store::Mariadb(MariadbStore::open(url, settings).await?),
            Scheme::Postgres => Store::Postgres(PostgresStore::open(url, settings).await?),
        })
    }
}

/// Forwards each call to the store inside; the match is the only cost.
macro_rules! each_store {
    ($self:ident, $db:ident => $call:expr) => {
        match $self {
            Store::Sqlite($db) => $call,
            Store::Null($db) => $call,
            Store::Cassandra($db) => $call,
            Store::Mariadb($db) => $call,
            Store::Postgres($db) => $call,
        }
    };
}

impl Database for Store {
    async fn setup(&self) -> Result<(), DbError> {
        each_store!(self, db => db.setup().await)
    }

    async fn create_order(&self, order: &Order) -> Result<(), DbError> {
        each_store!(self, db => db.create_order(order).await)
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        each_store!(self, db => db.read_order(order_id).await)
    }

    async fn update_order(
        &self,
        order_id: OrderId,
        changes: &[ItemChange],
        subtotal_cents: i64,
    ) -> Result<Applied, DbError> {
        each_store!(self, db => db.update_order(order_id, changes, subtotal_cents).await)
    }

    async fn update_status(
        &self,
        order_id: OrderId,
        status: OrderStatus,
    ) -> Result<Applied, DbError> {
        each_store!(self, db => db.update_status(order_id, status).await)
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        each_store!(self, db => db.delete_order(order_id).await)
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        each_store!(self, db => db.snapshot().await)
    }

    fn info(&self) -> StoreInfo {
        each_store!(self, db => db.info())
    }

    fn holds_data(&self) -> bool {
        each_store!(self, db => db.holds_data())
    }
}
