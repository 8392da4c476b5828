//! Stores in domain words, one folder per store.
//!
//! A store is one folder: it implements [`Store`] (what it does), [`DeclaredStore`]
//! (its URL scheme, settings, default concurrency, how it connects), [`BulkLoad`] and
//! [`DbTiming`] (empty where it does neither), notes what a call met on the way in
//! [`CallNotes`], and takes one line in the `stores!` list below (docs/stores.md has
//! the whole contract). Bindings never see a clock or a histogram: the
//! runner times each call from the outside. Driver crates are used only in their file.

mod bulk;
mod call_notes;
mod classify;
mod error;
#[cfg(test)]
mod fuzz;
mod ini;
mod initial_load;
mod login;
mod ownership;
mod peer_table;
mod settings;
mod sql;
mod stores;
mod timing;
mod tls;
mod url;
mod wire;

// The stores, each a folder (or one file) of its own.
mod cassandra;
mod mysql;
mod null;
mod postgres;
mod redis;
mod sqlite;
mod voldemort;

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::workload::{
    ItemsUpdate, KeyText, LineItem, Order, OrderId, OrderStatus, OrderUpdate, Payload, StatusUpdate,
};

pub use bulk::{
    BatchKind, BatchLimit, BulkLoad, LOAD_TABLE, LoadBatch, LoadError, LoadSetup, LoadShape,
    parse_size, row_key, row_values,
};
pub use call_notes::{
    CallNotes, FollowUp, follow_up, lane, not_queued, observe, queued, queued_sync, served_by,
    traced, tracing_wanted,
};
pub use error::{DbError, ErrorKind};
pub use initial_load::{
    DEFAULT_LOAD_BATCH, InitialBatch, LOAD_BATCH_BYTES, LOAD_REQUESTS_IN_FLIGHT, by_single_writes,
    partly_written,
};
pub use ownership::{Marker, Ownership};
pub use settings::{
    RENAMED as RENAMED_SETTINGS, Setting, Settings, Value, current_name as current_setting_name,
};
pub use stores::{StoreDeclarations, listed, schemes_where, store_declarations};
pub use timing::{DbTime, DbTiming, StatementTime};
pub use tls::is_tls_setting;
pub use url::{DbUrl, NetworkParts, TLS_SWITCH, UrlError, shown as shown_url};
pub use wire::handshake_cost;

/// The store a run uses when none is given: SQLite, embedded, its file in the result
/// folder. The one place it is written.
pub const DEFAULT_URL: &str = "sqlite://";

/// Tells `secrets` which stores' URLs carry a password in a lone user-info word, so that
/// it is masked in any text, a URL given by mistake included. Called once, first thing.
pub fn declare_secret_user_info() {
    for store in STORES.iter().filter(|s| s.lone_user_is_password) {
        crate::secrets::user_info_is_secret(store.scheme);
        for alias in store.aliases.iter().chain(&store.tls_scheme) {
            crate::secrets::user_info_is_secret(alias);
        }
    }
}

// The one list of stores, in the order help lists them. A new store is its folder
// (implementing `Store` and `DeclaredStore`), its `mod` line above and one line here.
stores::stores! {
    Sqlite => sqlite::SqliteStore,
    Null => null::NullStore,
    Cassandra => cassandra::CassandraStore,
    Mysql => mysql::MysqlStore,
    Postgres => postgres::PostgresStore,
    Redis => redis::RedisStore,
    Voldemort => voldemort::VoldemortStore,
}

/// Whether a write found what it targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    Yes,
    /// The order or key was not there; nothing changed.
    NotFound,
    /// The store cannot tell (e.g. a blind upsert).
    Unknown,
}

impl Applied {
    /// From the number of rows a statement matched.
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
    /// The payload as read back: its length, and whether it is the order's own text.
    pub payload: Payload,
}

/// Puts an order row and its items together.
pub fn order_of(row: OrderRow, items: Vec<LineItem>) -> Order {
    Order {
        order_id: row.order_id,
        client_id: row.client_id,
        customer: row.customer,
        address: row.address,
        created_at_ms: row.created_at_ms,
        status: row.status,
        subtotal_cents: row.subtotal_cents,
        items,
        payload: row.payload,
    }
}

/// Every order and line item the store holds, table by table, so that orphan items
/// show up too.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub orders: Vec<OrderRow>,
    pub items: Vec<(OrderId, LineItem)>,
}

/// One page of key-value records read back for verification, and where the next
/// page starts (`None` after the last).
#[derive(Debug, Default)]
pub struct KvPage {
    pub records: Vec<(String, Vec<u8>)>,
    pub next: Option<Vec<u8>>,
}

/// Key-value records per page of a scan: bounded, because values may be large.
pub const KV_PAGE: usize = 500;

/// What a run records about the store: its name, the server's own name for itself,
/// and the settings that matter.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreFacts {
    /// The URL scheme: the store's one name.
    pub name: String,
    /// What the server says it is, e.g. "MariaDB 10.11.11" or "Apache Cassandra 5.0.4".
    pub server_version: String,
    pub settings: BTreeMap<String, String>,
}

impl StoreFacts {
    /// The facts of a store a user logs in to: its own settings, with the TLS it
    /// spoke and where the password came from (where one was found).
    pub fn logged_in(
        name: &str,
        server_version: &str,
        mut settings: BTreeMap<String, String>,
        tls: String,
        password_from: Option<&str>,
    ) -> StoreFacts {
        settings.insert("tls".into(), tls);
        if let Some(from) = password_from {
            settings.insert("password_from".into(), from.into());
        }
        StoreFacts {
            name: name.into(),
            server_version: server_version.into(),
            settings,
        }
    }
}

/// How a store should open its connections.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Operations the run keeps in flight at once (its concurrency), each in a lane.
    pub concurrency: usize,
    pub settings: Settings,
    /// The longest a connection (TCP, handshake, authentication) may take.
    pub connect_timeout: Duration,
    /// The longest one operation may take; stores that can set it on the server do.
    pub op_timeout: Duration,
    /// Open for `verify`: never create a database or file.
    pub existing_only: bool,
    /// Every operation will be a key-value one (MySQL then sends them over its own wire).
    pub key_value_only: bool,
}

/// How long ending a store's connections may take: a silent server must not hold up
/// the end of a command.
const CLOSE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Ends `store`'s connections ([`Store::close`]) within [`CLOSE_LIMIT`].
pub async fn close_within<D: Store>(store: &D) {
    let _ = tokio::time::timeout(CLOSE_LIMIT, store.close()).await;
}

/// One database, as the runner and `verify` see it.
///
/// Methods return `Send` futures so the runner can spawn one task per lane. What it
/// does for `hatshop load` is its [`BulkLoad`]; the database's own time of an operation,
/// its [`DbTiming`].
pub trait Store: BulkLoad + DbTiming + Send + Sync + 'static {
    /// Makes hatshop's tables (orders, line items, key-value records) empty and ready.
    /// Drops only tables that carry hatshop's marker, unless `owner.recreate` says so.
    fn setup(&self, owner: &Ownership) -> impl Future<Output = Result<(), DbError>> + Send;

    /// [`Store::setup`] for a run whose initial load goes in before anything reads the
    /// tables: without the keys and indexes a bulk load is faster without, which
    /// [`Store::key_loaded`] adds once the load is in, as `pgbench -i` builds its key
    /// after its COPY. The default is `setup`.
    fn setup_for_load(
        &self,
        owner: &Ownership,
    ) -> impl Future<Output = Result<(), DbError>> + Send {
        self.setup(owner)
    }

    /// Adds what [`Store::setup_for_load`] left out, once the load is in: what it did,
    /// for the terminal, or `None` where nothing was left out.
    fn key_loaded(&self) -> impl Future<Output = Result<Option<&'static str>, DbError>> + Send {
        async { Ok(None) }
    }

    /// hatshop's marker, which names who set the tables up; an error where the store
    /// holds no hatshop tables (what `verify` reads back).
    fn check_owned(&self) -> impl Future<Output = Result<Marker, DbError>> + Send;

    /// The note hatshop keeps beside its marker of what its tables hold (how far the
    /// seeded stream went in them: `--reuse-load` reads it), or `None` where none was
    /// written since the tables were set up. Read as text the server sent: bound it.
    fn holding(&self) -> impl Future<Output = Result<Option<String>, DbError>> + Send;

    /// Writes that note in place of the last.
    fn write_holding(&self, note: &str) -> impl Future<Output = Result<(), DbError>> + Send;

    /// Uses hatshop's tables as they are, dropping nothing: a shard of a run whose
    /// tables `hatshop prepare` made. Checks the marker and readies what `setup` readies
    /// (prepared statements, scripts).
    fn use_existing(&self) -> impl Future<Output = Result<(), DbError>> + Send {
        async { self.check_owned().await.map(|_| ()) }
    }

    /// Writes a new order and its line items, all or nothing; `payload` is the text of
    /// its payload column (`workload::payload`), made before the call is timed.
    fn create_order(
        &self,
        order: &Order,
        payload: &str,
    ) -> impl Future<Output = Result<(), DbError>> + Send;

    /// The order with its line items, or `None` where there is none.
    fn read_order(
        &self,
        order_id: OrderId,
    ) -> impl Future<Output = Result<Option<Order>, DbError>> + Send;

    /// The study's update: the order row's date, status and subtotal in one statement.
    fn update_order(
        &self,
        update: &OrderUpdate,
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    /// New colour, size and quantity for some items, and the new subtotal.
    fn update_items(
        &self,
        update: ItemsUpdate<'_>,
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    /// Sets an order's status alone.
    fn update_status(
        &self,
        update: StatusUpdate,
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    /// Removes an order and its line items.
    fn delete_order(
        &self,
        order_id: OrderId,
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    /// Puts a new key.
    fn kv_write(
        &self,
        key: &KeyText,
        value: &[u8],
    ) -> impl Future<Output = Result<(), DbError>> + Send;

    /// Puts an existing key.
    fn kv_rewrite(
        &self,
        key: &KeyText,
        value: &[u8],
    ) -> impl Future<Output = Result<Applied, DbError>> + Send;

    /// A key's value, or `None` where there is none.
    fn kv_read(
        &self,
        key: &KeyText,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, DbError>> + Send;

    /// Removes a key.
    fn kv_delete(&self, key: &KeyText) -> impl Future<Output = Result<Applied, DbError>> + Send;

    /// Writes a batch of the initial load through the store's bulk path: all or nothing
    /// where that path is one statement or transaction; where it is not, a failure
    /// comes back as an unknown outcome ([`partly_written`]). The default sends the
    /// batch's rows as single writes, `batch.in_flight` at a time.
    fn load_initial(
        &self,
        batch: &InitialBatch<'_>,
    ) -> impl Future<Output = Result<(), DbError>> + Send {
        by_single_writes(self, batch)
    }

    /// Reads every order and line item back, for `verify`.
    fn snapshot(&self) -> impl Future<Output = Result<Snapshot, DbError>> + Send;

    /// Reads the key-value records back, a page at a time, from `cursor` (`None`: the
    /// start), for `verify`.
    fn kv_page(
        &self,
        cursor: Option<Vec<u8>>,
    ) -> impl Future<Output = Result<KvPage, DbError>> + Send;

    /// What run.json records of the store: its name, its server's version, its settings.
    fn facts(&self) -> StoreFacts;

    /// Waits for what the store still sends after its calls returned (Voldemort's
    /// replica writes past the write quorum), so that the run ends with them landed.
    fn settle(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Tidies what the load and warm-up left in the store's tables, just before
    /// measuring begins, where the server would otherwise do it in the background while
    /// the measured operations run: what it did, for run.json, or `None` where the
    /// store has nothing to tidy.
    fn tidy_loaded(&self) -> impl Future<Output = Result<Option<&'static str>, DbError>> + Send {
        async { Ok(None) }
    }

    /// Ends every connection the way the server expects (MySQL's COM_QUIT): dropped
    /// unannounced, each is an `Aborted connection` warning in MariaDB's error log.
    fn close(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Whether this run's lanes, `concurrency` of them, run on threads of their own, one
    /// per core, each running an event loop of its own, where that was measured to
    /// cost less (bench/NOTES.md); else they are tasks of the shared runtime. Only a
    /// store whose lanes use its own protocol clients says yes: those move each
    /// connection to the event loop of the lane using it (`wire::Stream`). `run` asks
    /// unless `--lane-threads` is given.
    fn lane_threads(&self, _concurrency: usize) -> bool {
        false
    }
}

/// What a store declares about itself; `stores!` lists the types that implement it.
pub trait DeclaredStore: Store + Sized {
    /// What the store is, as one value: its scheme, names, settings, defaults and what
    /// it can do (see [`StoreDeclarations`]).
    const DECLARED: StoreDeclarations;

    /// Opens the store's connections, with settings already checked.
    fn connect(
        url: &DbUrl,
        options: &ConnectOptions,
    ) -> impl Future<Output = Result<Self, DbError>> + Send;
}
