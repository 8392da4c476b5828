//! The key-value statements over hatshop's own wire (wire.rs): a connection per slot,
//! lane i taking slot i first, each with the four statements parsed once. A connection
//! that broke, or was left mid-request by a cancelled call, is opened again (its
//! statements parsed again) on its slot's next use.

use super::wire::{LeanConn, Login, Opened, Reply};
use crate::db::DbError;
use crate::db::sql::Statements;
use crate::db::tls::TlsFacts;
use crate::db::wire::LaneSlots;

/// The statements' names on every connection, and their SQL's place in `Kv`'s order.
const NAMES: [&str; 4] = ["kv_insert", "kv_update", "kv_select", "kv_delete"];

/// A key-value statement.
#[derive(Debug, Clone, Copy)]
pub enum Kv {
    Insert = 0,
    Update = 1,
    Select = 2,
    Delete = 3,
}

/// The connections of a run whose statements are all key-value ones.
pub struct LeanConns {
    login: Login,
    /// The four statements' SQL, in `Kv`'s order.
    sql: [String; 4],
    slots: LaneSlots<LeanConn>,
}

/// hatshop's own connections for the key-value statements, and the TLS the probe
/// connection spoke; where the server asks for a login method the own wire does not
/// speak, none, with a line saying why (tokio-postgres, which speaks every method,
/// then carries them).
pub async fn lean_conns(
    login: Login,
    sql: &Statements,
    connections: usize,
) -> Result<Option<(LeanConns, Option<TlsFacts>)>, DbError> {
    let probe = match LeanConn::open(&login).await? {
        Opened::Conn(conn) => conn,
        Opened::Unserved(why) => {
            crate::console::note!(
                "note: {why}, which hatshop's own PostgreSQL client does not speak: tokio-postgres carries the key-value statements (run.json: kv_wire)"
            );
            return Ok(None);
        }
    };
    let tls = probe.tls_facts();
    probe.quit().await;
    let statements = sql.kv().map(String::from);
    Ok(Some((LeanConns::new(login, statements, connections), tls)))
}

impl LeanConns {
    /// `connections` slots, none open yet; `sql`: the statements in `Kv`'s order.
    pub fn new(login: Login, sql: [String; 4], connections: usize) -> LeanConns {
        LeanConns {
            login,
            sql,
            slots: LaneSlots::new(connections),
        }
    }

    /// Connection slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Runs `which` with `params` on a connection of the slots.
    pub async fn run(&self, which: Kv, params: &[&[u8]]) -> Result<Reply, DbError> {
        let mut slot = self.slots.take(|| self.open()).await?;
        let conn = slot.as_mut().expect("opened by take");
        conn.execute(NAMES[which as usize], params).await
    }

    /// Runs `copies` in one transaction on a connection of the slots (`LeanConn::copy_in`).
    pub async fn copy_in(&self, copies: &[(&str, &[u8])]) -> Result<(), DbError> {
        let mut slot = self.slots.take(|| self.open()).await?;
        let conn = slot.as_mut().expect("opened by take");
        conn.copy_in(copies).await
    }

    /// Opens every connection again, its statements parsed (the tables are there now),
    /// so nothing is opened or parsed while measuring.
    pub async fn reopen_all(&self) -> Result<(), DbError> {
        for i in 0..self.slots.len() {
            let mut slot = self.slots.slot(i).await;
            if let Some(old) = slot.take() {
                old.quit().await;
            }
            *slot = Some(self.open().await?);
        }
        Ok(())
    }

    /// Says goodbye on every connection.
    pub async fn close_all(&self) {
        for i in 0..self.slots.len() {
            if let Some(conn) = self.slots.slot(i).await.take() {
                conn.quit().await;
            }
        }
    }

    async fn open(&self) -> Result<LeanConn, DbError> {
        let mut conn = match LeanConn::open(&self.login).await? {
            Opened::Conn(conn) => conn,
            Opened::Unserved(why) => {
                return Err(DbError::new(
                    crate::db::ErrorKind::Connection,
                    format!("{why} now, which hatshop's own PostgreSQL client does not speak"),
                ));
            }
        };
        for (name, sql) in NAMES.iter().zip(&self.sql) {
            conn.prepare(name, sql).await?;
        }
        Ok(conn)
    }
}
