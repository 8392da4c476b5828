//! One host's connections for operations: `connections` of them, each opened once and kept
//! for its life with its prepared statements, lane i taking connection i first.
//!
//! Each connection keeps the handles of its key-value statements, so that an
//! operation names its statement without the driver parsing and hashing its SQL text
//! to find it in the connection's cache. That cache holds more statements than hatshop
//! ever prepares on one connection (`stmt_cache_size` in connect.rs), so the driver
//! never closes a statement whose handle is kept here.
//!
//! mysql_async's pool sends every returned connection through its recycling task and a
//! shared queue; with one lane per connection neither is needed, and a lane finds its
//! own connection free on the first try, and the wait for a connection all but goes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, Params, Statement, Transaction, TxOpts, Value as SqlValue};
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::classify;
use super::wire::{LeanConn, Login, Param, Prepared, Reply};
use crate::db::{DbError, ErrorKind};

/// One host's connections, a slot per lane, opened when first used.
pub struct HostConns {
    pub name: String,
    opts: Opts,
    /// Set when the key-value statements go over hatshop's own wire (wire.rs): the
    /// connections are then its own, and speak nothing else.
    lean: Option<Login>,
    slots: Vec<Arc<Mutex<Option<Open>>>>,
    /// Where a caller outside a lane starts looking.
    next: AtomicUsize,
}

/// The key-value statements whose handles a connection keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kv {
    Insert,
    Update,
    Select,
    Delete,
}

/// An open connection and the key-value statements prepared on it so far.
enum Open {
    Driver {
        conn: Conn,
        kv: [Option<Statement>; 4],
    },
    Lean {
        conn: LeanConn,
        kv: [Option<Prepared>; 4],
    },
}

/// A connection held for one operation. One that broke or was left mid-request (a
/// timeout) is dropped when let go, and its slot opens a new one on its next use.
pub struct Held(OwnedMutexGuard<Option<Open>>);

impl Held {
    fn open(&mut self) -> &mut Open {
        self.0.as_mut().expect("a held slot has a connection")
    }

    /// mysql_async's connection, for the statements other than the key-value ones.
    pub fn driver(&mut self) -> Result<&mut Conn, DbError> {
        match self.open() {
            Open::Driver { conn, .. } => Ok(conn),
            Open::Lean { .. } => Err(DbError::new(
                ErrorKind::Other,
                "this run's MySQL connections speak only key-value statements (kv_wire=own)",
            )),
        }
    }

    /// A transaction on mysql_async's connection (an order's writes, all or nothing).
    pub async fn transaction(&mut self) -> Result<Transaction<'_>, DbError> {
        self.driver()?
            .start_transaction(TxOpts::default())
            .await
            .map_err(classify)
    }

    /// Runs key-value statement `which` (its text: `sql`, prepared on this connection
    /// on first use) with `params`: a select's reply holds its value, the others'
    /// the rows they found.
    pub async fn kv(
        &mut self,
        which: Kv,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<Reply, DbError> {
        match self.open() {
            Open::Lean { conn, kv } => {
                let statement = match &mut kv[which as usize] {
                    Some(statement) => statement,
                    slot => slot.insert(conn.prepare(sql).await.map_err(classify)?),
                };
                conn.execute(statement, params).await.map_err(classify)
            }
            // Boxed, as opening is: inline, mysql_async's futures would be part of
            // every key-value call's future, the own wire's calls too.
            Open::Driver { conn, kv } => Box::pin(kv_on_driver(conn, kv, which, sql, params)).await,
        }
    }

    /// Runs `statements` as text in one transaction, all or nothing, on whichever
    /// connection the slot holds: the initial load's multi-row INSERTs go on the own
    /// wire's connections too, so a run of key-value events loads at the server's own
    /// speed without opening a driver's connection per batch.
    pub async fn in_one_transaction(&mut self, statements: &[String]) -> Result<(), DbError> {
        match self.open() {
            Open::Driver { conn, .. } => {
                let mut tx = conn
                    .start_transaction(TxOpts::default())
                    .await
                    .map_err(classify)?;
                for sql in statements {
                    tx.query_drop(sql).await.map_err(classify)?;
                }
                tx.commit().await.map_err(classify)
            }
            Open::Lean { conn, .. } => {
                conn.query_column("START TRANSACTION")
                    .await
                    .map_err(classify)?;
                for sql in statements {
                    if let Err(e) = conn.query_column(sql).await {
                        // A statement the server refused leaves the transaction open.
                        let _ = conn.query_column("ROLLBACK").await;
                        return Err(classify(e));
                    }
                }
                conn.query_column("COMMIT").await.map_err(classify)?;
                Ok(())
            }
        }
    }

    /// The first column of `sql`'s rows, as numbers (for reading the server's times).
    pub async fn query_numbers(&mut self, sql: &str) -> Result<Vec<Option<u64>>, DbError> {
        match self.open() {
            Open::Driver { conn, .. } => conn.query(sql).await.map_err(classify),
            Open::Lean { conn, .. } => Ok(conn
                .query_column(sql)
                .await
                .map_err(classify)?
                .into_iter()
                .map(|cell| std::str::from_utf8(&cell?).ok()?.parse().ok())
                .collect()),
        }
    }
}

/// Runs key-value statement `which` over mysql_async, as [`Held::kv`] does.
async fn kv_on_driver(
    conn: &mut Conn,
    kv: &mut [Option<Statement>; 4],
    which: Kv,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Reply, DbError> {
    let statement = match &kv[which as usize] {
        Some(statement) => statement.clone(),
        None => {
            let statement = conn.prep(sql).await.map_err(classify)?;
            kv[which as usize].insert(statement).clone()
        }
    };
    let params = Params::Positional(
        params
            .iter()
            .map(|param| match *param {
                Param::Int(n) => SqlValue::Int(n),
                Param::Bytes(bytes) => SqlValue::from(bytes),
            })
            .collect(),
    );
    if which == Kv::Select {
        let value = conn.exec_first(&statement, params).await;
        let value = value.map_err(classify)?;
        return Ok(Reply { affected: 0, value });
    }
    conn.exec_drop(&statement, params).await.map_err(classify)?;
    Ok(Reply {
        affected: conn.affected_rows(),
        value: None,
    })
}

impl Drop for Held {
    fn drop(&mut self) {
        // mysql_async marks a connection disconnected while a request is in flight and
        // clears the mark when the reply (or a server error) is read; hatshop's own
        // marks it broken the same way.
        let broken = match self.0.as_ref() {
            Some(Open::Driver { conn, .. }) => conn.is_disconnected(),
            Some(Open::Lean { conn, .. }) => conn.broken,
            None => false,
        };
        if broken {
            *self.0 = None;
        }
    }
}

impl HostConns {
    /// Slots for `size` connections to one host, none open yet.
    pub fn new(name: String, opts: Opts, lean: Option<Login>, size: usize) -> HostConns {
        HostConns {
            name,
            opts,
            lean,
            slots: (0..size.max(1))
                .map(|_| Arc::new(Mutex::new(None)))
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// Connection slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// A connection: the lane's own if free, else any free one, else the lane's own
    /// when it is let go. Opened if its slot has none.
    pub async fn take(&self) -> Result<Held, DbError> {
        let n = self.slots.len();
        let start = crate::db::lane().unwrap_or_else(|| self.next.fetch_add(1, Ordering::Relaxed));
        let mut held = None;
        for i in 0..n {
            if let Ok(guard) = self.slots[(start + i) % n].clone().try_lock_owned() {
                held = Some(guard);
                break;
            }
        }
        let mut guard = match held {
            Some(guard) => guard,
            None => self.slots[start % n].clone().lock_owned().await,
        };
        if guard.is_none() {
            // Boxed: opening is rare, and inline its future would be part of every
            // call's, which is copied whole into the heap on each call (`AnyStore`).
            *guard = Some(Box::pin(self.open()).await?);
        }
        Ok(Held(guard))
    }

    /// Opens every connection again (after setup made the tables), preparing
    /// `statements` on each (hatshop's own connections: `kv`, the key-value ones in
    /// `Kv`'s order), so nothing is opened or prepared while measuring. A table the
    /// server does not know yet is waited for up to `patience` (a Galera node applies
    /// the tables' creation a moment after the node that ran it).
    pub async fn reopen_all(
        &self,
        statements: &[String],
        kv: [&str; 4],
        patience: Duration,
    ) -> Result<(), DbError> {
        for slot in &self.slots {
            let mut guard = slot.lock().await;
            *guard = None;
            let mut open = self.open().await?;
            match &mut open {
                Open::Driver { conn, .. } => {
                    for sql in statements {
                        let until = Instant::now() + patience;
                        while let Err(e) = conn.prep(sql.as_str()).await {
                            table_awaited(e, until).await?;
                        }
                    }
                }
                Open::Lean { conn, kv: prepared } => {
                    for (slot, sql) in prepared.iter_mut().zip(kv) {
                        let until = Instant::now() + patience;
                        *slot = loop {
                            match conn.prepare(sql).await {
                                Ok(statement) => break Some(statement),
                                Err(e) => table_awaited(e, until).await?,
                            }
                        };
                    }
                }
            }
            *guard = Some(open);
        }
        Ok(())
    }

    /// Ends every connection, telling the server; a slot's next use opens a new one.
    pub async fn close_all(&self) {
        for slot in &self.slots {
            match slot.lock().await.take() {
                Some(Open::Driver { conn, .. }) => {
                    let _ = conn.disconnect().await;
                }
                Some(Open::Lean { conn, .. }) => conn.quit().await,
                None => {}
            }
        }
    }

    async fn open(&self) -> Result<Open, DbError> {
        let context = |e| classify(e).context(format!("host {}: no connection", self.name));
        Ok(match &self.lean {
            Some(login) => Open::Lean {
                conn: LeanConn::open(login).await.map_err(context)?,
                kv: Default::default(),
            },
            None => Open::Driver {
                conn: super::login::login_retried(|| Conn::new(self.opts.clone()))
                    .await
                    .map_err(context)?,
                kv: Default::default(),
            },
        })
    }
}

/// After a failed prepare: waits 50 ms when the server says a table does not exist
/// (1146) and `until` has not passed, else gives the error.
async fn table_awaited(error: mysql_async::Error, until: Instant) -> Result<(), DbError> {
    const NO_SUCH_TABLE: u16 = 1146;
    match error {
        mysql_async::Error::Server(e) if e.code == NO_SUCH_TABLE && Instant::now() < until => {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(())
        }
        e => Err(classify(e)),
    }
}
