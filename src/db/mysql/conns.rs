//! One host's connections for operations: `pool` of them, each opened once and kept
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
//! own connection free on the first try. On race-sql-select the wait for a connection
//! fell from a mean of 13.4 µs to 0.06 µs.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, Statement};
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::classify;
use crate::db::DbError;

pub struct HostConns {
    pub name: String,
    opts: Opts,
    slots: Vec<Arc<Mutex<Option<Open>>>>,
    /// Where a caller outside a lane starts looking.
    next: AtomicUsize,
}

/// The key-value statements whose handles a connection keeps.
#[derive(Debug, Clone, Copy)]
pub enum Kv {
    Insert,
    Update,
    Select,
    Delete,
}

/// An open connection and the key-value statements prepared on it so far.
struct Open {
    conn: Conn,
    kv: [Option<Statement>; 4],
}

impl From<Conn> for Open {
    fn from(conn: Conn) -> Self {
        Open {
            conn,
            kv: Default::default(),
        }
    }
}

/// A connection held for one operation. One that broke or was left mid-request (a
/// timeout) is dropped when let go, and its slot opens a new one on its next use.
pub struct Held(OwnedMutexGuard<Option<Open>>);

impl Held {
    fn open(&mut self) -> &mut Open {
        self.0.as_mut().expect("a held slot has a connection")
    }

    /// The handle of key-value statement `which` (its text: `sql`), prepared on this
    /// connection on first use.
    pub async fn kv(&mut self, which: Kv, sql: &str) -> Result<Statement, mysql_async::Error> {
        let open = self.open();
        if let Some(statement) = &open.kv[which as usize] {
            return Ok(statement.clone());
        }
        let statement = open.conn.prep(sql).await?;
        open.kv[which as usize] = Some(statement.clone());
        Ok(statement)
    }
}

impl Deref for Held {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.0.as_ref().expect("a held slot has a connection").conn
    }
}

impl DerefMut for Held {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.open().conn
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // mysql_async marks a connection disconnected while a request is in flight and
        // clears the mark when the reply (or a server error) is read.
        if self
            .0
            .as_ref()
            .is_some_and(|open| open.conn.is_disconnected())
        {
            *self.0 = None;
        }
    }
}

impl HostConns {
    pub fn new(name: String, opts: Opts, size: usize) -> HostConns {
        HostConns {
            name,
            opts,
            slots: (0..size.max(1))
                .map(|_| Arc::new(Mutex::new(None)))
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

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
            *guard = Some(self.open().await?.into());
        }
        Ok(Held(guard))
    }

    /// Opens every connection again (after setup made the tables), preparing
    /// `statements` on each, so nothing is opened or prepared while measuring. A table
    /// the server does not know yet is waited for up to `patience` (a Galera node
    /// applies the tables' creation a moment after the node that ran it).
    pub async fn reopen_all(
        &self,
        statements: &[String],
        patience: Duration,
    ) -> Result<(), DbError> {
        for slot in &self.slots {
            let mut guard = slot.lock().await;
            *guard = None;
            let mut conn = self.open().await?;
            for sql in statements {
                prep_once_there(&mut conn, sql, patience).await?;
            }
            *guard = Some(conn.into());
        }
        Ok(())
    }

    /// Ends every connection, telling the server; a slot's next use opens a new one.
    pub async fn close_all(&self) {
        for slot in &self.slots {
            let conn = slot.lock().await.take();
            if let Some(open) = conn {
                let _ = open.conn.disconnect().await;
            }
        }
    }

    async fn open(&self) -> Result<Conn, DbError> {
        Conn::new(self.opts.clone())
            .await
            .map_err(|e| classify(e).context(format!("host {}: no connection", self.name)))
    }
}

/// Prepares `sql`; while the server says a table of it does not exist (1146), again
/// every 50 ms, for up to `patience`.
async fn prep_once_there(conn: &mut Conn, sql: &str, patience: Duration) -> Result<(), DbError> {
    const NO_SUCH_TABLE: u16 = 1146;
    let until = Instant::now() + patience;
    loop {
        match conn.prep(sql).await {
            Ok(_) => return Ok(()),
            Err(mysql_async::Error::Server(e))
                if e.code == NO_SUCH_TABLE && Instant::now() < until =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(classify(e)),
        }
    }
}
