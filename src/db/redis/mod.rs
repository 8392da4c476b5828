//! Redis through the `redis` crate's async connection manager (it reconnects after a
//! lost connection). Key-value records are strings, `SET … NX` for a write and
//! `SET … XX` for a rewrite, so both say whether their key was there. An order is one
//! hash, `hatshop:order:ID`, with the list of its line-item ids, `hatshop:order:ID:items`,
//! and one hash per item, `hatshop:item:ID`; the writes that must find their order are
//! small Lua scripts, loaded at setup (Redis's prepared statements), each one atomic.
//!
//! Pipelining is off by default: every lane has its own connection with one request in
//! flight. `pipeline=N` lets N lanes share a connection, their requests written back to
//! back, as `redis-benchmark -P` does. hatshop owns the keys under `hatshop:` and the
//! marker key `hatshop_meta`.
//!
//! A run of key-value events alone, unpipelined, sends its operations over hatshop's
//! own wire instead (wire.rs), a connection per lane; the connection manager then
//! keeps one connection, for setup and verify. How a lane takes its connection:
//! connections.rs.

mod bulk_load;
mod connections;
mod errors;
mod initial_load;
mod read_back;
mod rows;
mod scripts;
mod wire;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Script};
use tokio::sync::Semaphore;

use self::connections::{Slot, TLS_SETTINGS, client_of, login_of};
use self::errors::classify;
use self::rows::{fields, items_key, kv_key, line_item, order_key, order_row};
use self::scripts::{DELETE_ORDER, READ_ORDER, SET_IF_EXISTS, UPDATE_ITEMS};
use self::wire::{LeanConn, Login, Reply};
use super::ownership::{self, MARKER, Marker, Ownership};
use super::wire::LaneSlots;
use super::{
    Applied, ConnectOptions, DbError, DbUrl, DeclaredStore, ErrorKind, KvPage, Setting, Snapshot,
    Store, StoreDeclarations, StoreFacts, Value,
};
use crate::workload::{ItemsUpdate, KeyText, LineItem, Order, OrderId, OrderUpdate, StatusUpdate};

/// The marker hash's field that notes what the tables hold (`Store::holding`).
const HOLDING_FIELD: &str = "holding";
const ORDER_FIELDS: [&str; 6] = [
    "client_id",
    "customer",
    "address",
    "created_at_ms",
    "status",
    "subtotal_cents",
];
/// The order hash's field of its payload, set only where there is one.
const PAYLOAD_FIELD: &str = "payload";

/// Redis: orders as hashes, records as strings, a connection per lane unless pipelined.
pub struct RedisStore {
    slots: Vec<Slot>,
    next: AtomicUsize,
    pipeline: usize,
    target: String,
    version: String,
    persistence: String,
    load: super::LoadSetup,
    read_order: Script,
    set_if_exists: Script,
    update_items: Script,
    delete_order: Script,
    /// Where and as whom hatshop's own wire logs in.
    login: Login,
    /// The lanes' own connections, when the key-value commands go over hatshop's own wire.
    lean: Option<LaneSlots<LeanConn>>,
    /// The TLS the own wire's connections spoke.
    tls_spoken: std::sync::Mutex<Option<crate::db::tls::TlsFacts>>,
    /// For the connection that sets up and checks hatshop's keys ([`Self::setup_conn`]).
    client: redis::Client,
    connect_timeout: std::time::Duration,
}

/// The settings Redis takes (URL `?key=value` or flags).
const SETTINGS: &[Setting] = &[
    Setting {
        name: "pipeline",
        value: Value::Count { min: 1 },
        default: "1",
        help: "lanes that share one connection, their requests written back to back (Redis pipelining); 1: a connection per lane",
    },
    Setting {
        name: "kv_wire",
        value: Value::Choice(&["own", "redis-rs"]),
        default: "own",
        help: "in runs of key-value events alone without pipelining, send the commands over hatshop's own lean client of RESP2 (TLS, and AUTH logins) or through the redis crate's connection manager, as every other run does",
    },
    TLS_SETTINGS[0],
    TLS_SETTINGS[1],
    TLS_SETTINGS[2],
    TLS_SETTINGS[3],
    TLS_SETTINGS[4],
];

impl DeclaredStore for RedisStore {
    const DECLARED: StoreDeclarations = StoreDeclarations {
        tls_scheme: Some("rediss"),
        login: true,
        lone_user_is_password: true,
        // One from 4 lanes up: one thread turned more GETs around, for less CPU each,
        // than two; with one or two lanes, two did as well or better.
        client_threads: |concurrency| (concurrency >= 4).then_some(1),
        ..StoreDeclarations::new(
            "redis",
            "Redis (keys under hatshop:; `hatshop server start redis` runs one)",
            "redis://127.0.0.1:6379/0?pipeline=1",
            SETTINGS,
            |_| 8,
        )
    };

    async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let pipeline = options.settings.count("pipeline") as usize;
        let login = login_of(url, options)?;
        let client = client_of(&login)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.connect_timeout))
            .set_response_timeout(Some(options.op_timeout))
            .set_number_of_retries(1);
        let own_wire =
            options.key_value_only && pipeline == 1 && options.settings.choice("kv_wire") == "own";
        let lean = own_wire.then(|| LaneSlots::new(options.concurrency));
        let count = match own_wire {
            true => 1,
            false => options.concurrency.div_ceil(pipeline).max(1),
        };
        let tls_spoken = connections::probe(&login).await?;
        let mut slots = Vec::with_capacity(count);
        for _ in 0..count {
            let conn = client
                .get_connection_manager_with_config(config.clone())
                .await
                .map_err(|e| connections::refused(e, &login, options.connect_timeout))?;
            slots.push(Slot {
                conn,
                users: Semaphore::new(pipeline),
            });
        }
        let mut conn = slots[0].conn.clone();
        let server: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut conn)
            .await
            .map_err(classify)?;
        let version = server
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap_or("?")
            .trim()
            .to_string();
        let persistence = persistence(&mut conn).await?;
        Ok(RedisStore {
            slots,
            next: AtomicUsize::new(0),
            pipeline,
            target: url.to_string(),
            version: format!("Redis {version}"),
            persistence,
            load: Default::default(),
            read_order: Script::new(READ_ORDER),
            set_if_exists: Script::new(SET_IF_EXISTS),
            update_items: Script::new(UPDATE_ITEMS),
            delete_order: Script::new(DELETE_ORDER),
            login,
            lean,
            tls_spoken: std::sync::Mutex::new(tls_spoken),
            client,
            connect_timeout: options.connect_timeout,
        })
    }
}

/// What the server does to keep data: none, rdb, aof-everysec, aof-always, aof-no.
async fn persistence(conn: &mut ConnectionManager) -> Result<String, DbError> {
    let get = |name: &'static str| redis::cmd("CONFIG").arg("GET").arg(name).clone();
    let aof: Vec<String> = get("appendonly")
        .query_async(conn)
        .await
        .map_err(classify)?;
    let fsync: Vec<String> = get("appendfsync")
        .query_async(conn)
        .await
        .map_err(classify)?;
    let save: Vec<String> = get("save").query_async(conn).await.map_err(classify)?;
    let aof_on = aof.get(1).is_some_and(|v| v == "yes");
    let rdb_on = save.get(1).is_some_and(|v| !v.trim().is_empty());
    Ok(match (aof_on, rdb_on) {
        (true, _) => format!("aof-{}", fsync.get(1).map_or("?", String::as_str)),
        (false, true) => "rdb".into(),
        (false, false) => "none".into(),
    })
}

impl RedisStore {
    /// A connection of its own for setting up and checking hatshop's keys: its
    /// commands wait as long as the caller's deadline allows (the schema's 120 s),
    /// where the lanes' connections give up after `--op-timeout`, which bounds the
    /// measured operations only.
    async fn setup_conn(&self) -> Result<redis::aio::MultiplexedConnection, DbError> {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(None);
        self.client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| connections::refused(e, &self.login, self.connect_timeout))
    }
}

impl RedisStore {
    /// `SET key value NX|XX` (`condition`): whether it set the value.
    async fn set_if(&self, key: &KeyText, value: &[u8], condition: &str) -> Result<bool, DbError> {
        let name = kv_key(key);
        if let Some(slots) = &self.lean {
            let args: [&[u8]; 4] = [b"SET", name.as_bytes(), value, condition.as_bytes()];
            return Ok(self.lean(slots, &args).await? != Reply::Nil);
        }
        let mut held = self.conn().await?;
        let set: Option<String> = redis::cmd("SET")
            .arg(name)
            .arg(value)
            .arg(condition)
            .query_async(&mut held.conn)
            .await
            .map_err(classify)?;
        Ok(set.is_some())
    }

    /// Loads every script once, so no measured call pays for sending its text.
    async fn load_scripts(&self) -> Result<(), DbError> {
        let mut conn = self.setup_conn().await?;
        for script in [
            &self.read_order,
            &self.set_if_exists,
            &self.update_items,
            &self.delete_order,
        ] {
            script
                .prepare_invoke()
                .load_async(&mut conn)
                .await
                .map_err(classify)?;
        }
        Ok(())
    }

    async fn marker_exists(&self) -> Result<bool, DbError> {
        let mut conn = self.setup_conn().await?;
        conn.exists(MARKER).await.map_err(classify)
    }
}

impl crate::db::DbTiming for RedisStore {}

impl Store for RedisStore {
    /// From 2 to 6 lanes over hatshop's own wire: there GETs and SETs ran 3–13 %
    /// faster; from 8 up, the lanes as tasks of one runtime thread ran up to a third
    /// faster (bench/NOTES.md).
    fn lane_threads(&self, concurrency: usize) -> bool {
        self.lean.is_some() && (2..=6).contains(&concurrency)
    }

    async fn setup(&self, owner: &Ownership) -> Result<(), DbError> {
        let mut conn = self.setup_conn().await?;
        let ours = read_back::scan(&mut conn, "hatshop:*").await?;
        let mut existing: Vec<String> = Vec::new();
        if self.marker_exists().await? {
            existing.push(MARKER.to_string());
        } else if !ours.is_empty() {
            existing.push(format!("{} keys under hatshop:", ours.len()));
        }
        owner.may_drop(&self.target, &existing)?;
        for chunk in ours.chunks(1000) {
            let _: () = redis::cmd("UNLINK")
                .arg(chunk)
                .query_async(&mut conn)
                .await
                .map_err(classify)?;
        }
        let _: () = redis::pipe()
            .atomic()
            .del(MARKER)
            .hset(MARKER, "made_by", &owner.note)
            .query_async(&mut conn)
            .await
            .map_err(classify)?;
        drop(conn);
        self.load_scripts().await?;
        self.open_lean().await
    }

    async fn check_owned(&self) -> Result<Marker, DbError> {
        let mut conn = self.setup_conn().await?;
        let made_by: Option<String> = conn.hget(MARKER, "made_by").await.map_err(classify)?;
        match made_by {
            Some(made_by) => Ok(Marker { made_by }),
            None => Err(ownership::not_ours(&self.target)),
        }
    }

    async fn holding(&self) -> Result<Option<String>, DbError> {
        let mut conn = self.setup_conn().await?;
        conn.hget(MARKER, HOLDING_FIELD).await.map_err(classify)
    }

    async fn write_holding(&self, note: &str) -> Result<(), DbError> {
        let mut conn = self.setup_conn().await?;
        conn.hset(MARKER, HOLDING_FIELD, note)
            .await
            .map_err(classify)
    }

    async fn use_existing(&self) -> Result<(), DbError> {
        self.check_owned().await?;
        self.load_scripts().await?;
        self.open_lean().await
    }

    async fn create_order(&self, order: &Order, payload: &str) -> Result<(), DbError> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        initial_load::order_commands(&mut pipe, order, payload);
        let mut held = self.conn().await?;
        let _: () = pipe.query_async(&mut held.conn).await.map_err(classify)?;
        Ok(())
    }

    /// One pipeline per batch (initial_load.rs).
    async fn load_initial(&self, batch: &super::InitialBatch<'_>) -> Result<(), DbError> {
        self.pipeline_initial(batch).await
    }

    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        let mut held = self.conn().await?;
        let parts: Vec<Vec<String>> = self
            .read_order
            .key(order_key(order_id))
            .key(items_key(order_id))
            .invoke_async(&mut held.conn)
            .await
            .map_err(classify)?;
        let Some((order, items)) = parts.split_first() else {
            return Ok(None);
        };
        let row = order_row(order_id, order);
        let mut items: Vec<LineItem> = items
            .iter()
            .map(|flat| {
                let id = fields(flat)
                    .get("line_item_id")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                line_item(id, flat).1
            })
            .collect();
        items.sort_by_key(|i| i.line_item_id);
        Ok(Some(super::order_of(row, items)))
    }

    async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let mut held = self.conn().await?;
        let found: i64 = self
            .set_if_exists
            .key(order_key(order_id))
            .arg("created_at_ms")
            .arg(update.created_at_ms)
            .arg("status")
            .arg(update.status.as_str())
            .arg("subtotal_cents")
            .arg(update.subtotal_cents)
            .invoke_async(&mut held.conn)
            .await
            .map_err(classify)?;
        Ok(Applied::from_rows(found as u64))
    }

    async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        let mut invocation = self.update_items.key(order_key(order_id));
        invocation.arg(update.subtotal_cents);
        for change in update.changes {
            invocation
                .arg(change.line_item_id)
                .arg(&change.colour)
                .arg(&change.size)
                .arg(change.quantity);
        }
        let mut held = self.conn().await?;
        let found: i64 = invocation
            .invoke_async(&mut held.conn)
            .await
            .map_err(classify)?;
        Ok(Applied::from_rows(found as u64))
    }

    async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
        let StatusUpdate { order_id, status } = update;
        let mut held = self.conn().await?;
        let found: i64 = self
            .set_if_exists
            .key(order_key(order_id))
            .arg("status")
            .arg(status.as_str())
            .invoke_async(&mut held.conn)
            .await
            .map_err(classify)?;
        Ok(Applied::from_rows(found as u64))
    }

    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        let mut held = self.conn().await?;
        let found: i64 = self
            .delete_order
            .key(order_key(order_id))
            .key(items_key(order_id))
            .invoke_async(&mut held.conn)
            .await
            .map_err(classify)?;
        Ok(Applied::from_rows(found as u64))
    }

    async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
        match self.set_if(key, value, "NX").await? {
            true => Ok(()),
            false => Err(DbError::new(
                ErrorKind::Constraint,
                format!("key {} exists already", key.as_str()),
            )),
        }
    }

    async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
        Ok(match self.set_if(key, value, "XX").await? {
            true => Applied::Yes,
            false => Applied::NotFound,
        })
    }

    async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        let name = kv_key(key);
        let Some(slots) = &self.lean else {
            let mut held = self.conn().await?;
            return held.conn.get(name).await.map_err(classify);
        };
        match self.lean(slots, &[b"GET", name.as_bytes()]).await? {
            Reply::Bulk(value) => Ok(Some(value)),
            Reply::Nil => Ok(None),
            other => Err(unexpected("GET", &other)),
        }
    }

    async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
        let name = kv_key(key);
        let Some(slots) = &self.lean else {
            let mut held = self.conn().await?;
            let removed: u64 = held.conn.del(name).await.map_err(classify)?;
            return Ok(Applied::from_rows(removed));
        };
        match self.lean(slots, &[b"DEL", name.as_bytes()]).await? {
            Reply::Integer(removed) => Ok(Applied::from_rows(removed.max(0) as u64)),
            other => Err(unexpected("DEL", &other)),
        }
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        self.read_back().await
    }

    async fn kv_page(&self, cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        self.kv_page_from(cursor).await
    }

    fn facts(&self) -> StoreFacts {
        let connections = self.lean.as_ref().map_or(self.slots.len(), LaneSlots::len);
        let kv_wire = match self.lean {
            Some(_) => "own",
            None => "redis-rs",
        };
        let settings = BTreeMap::from([
            ("pipeline".to_string(), self.pipeline.to_string()),
            ("connections".to_string(), connections.to_string()),
            ("persistence".to_string(), self.persistence.clone()),
            ("kv_wire".to_string(), kv_wire.to_string()),
        ]);
        StoreFacts::logged_in(
            Self::DECLARED.scheme,
            &self.version,
            settings,
            self.tls_words(),
            self.login.password_from,
        )
    }

    async fn close(&self) {
        if let Some(slots) = &self.lean {
            for i in 0..slots.len() {
                slots.slot(i).await.take();
            }
        }
    }
}

impl RedisStore {
    /// The TLS in use, as run.json's settings say it.
    fn tls_words(&self) -> String {
        let spoken = self
            .tls_spoken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match (&self.login.tls, spoken) {
            (None, _) => "off".into(),
            (Some(tls), Some(facts)) => format!("{} ({})", facts.summary(), tls.mode_source),
            (Some(tls), None) => format!("on ({})", tls.mode_source),
        }
    }
}

/// A reply of a kind the command never gives.
fn unexpected(command: &str, reply: &Reply) -> DbError {
    DbError::other(format!("Redis answered {command} with {reply:?}"))
}
