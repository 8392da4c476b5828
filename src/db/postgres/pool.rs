//! The driver's connections: each opened within the connect timeout and, once the
//! tables are there, with every statement prepared; handed to one call at a time, a
//! lane's own first; opened again on its next use when the server closed it.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;

use tokio::sync::MutexGuard;
use tokio_postgres::{Client, NoTls, Statement};

use super::PostgresStore;
use super::errors::classify;
use super::rows::get;
use super::tls::MakeRustls;
use crate::db::DbError;
use crate::db::ownership::TABLES;
use crate::db::wire::within;

/// One connection and the statements prepared on it.
pub(super) struct PgConn {
    pub(super) client: Client,
    prepared: HashMap<String, Statement>,
}

impl PgConn {
    /// The statement of `sql`, prepared on this connection the first time it is asked.
    pub(super) async fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await.map_err(classify)?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

/// A connection of the pool, held: opened (again) if it was closed.
pub(super) struct Held<'a>(pub(super) MutexGuard<'a, Option<PgConn>>);

impl Deref for Held<'_> {
    type Target = PgConn;
    fn deref(&self) -> &PgConn {
        self.0.as_ref().expect("opened before it is handed out")
    }
}

impl DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut PgConn {
        self.0.as_mut().expect("opened before it is handed out")
    }
}

impl PostgresStore {
    /// Opens one connection, handshake included, within the connect timeout.
    pub(super) async fn open(&self) -> Result<PgConn, DbError> {
        let handshake = async {
            // The connection task ends when the server goes; the client then reports
            // "closed", and the next use opens a new one.
            match &self.tls {
                Some(tls) => {
                    let make = MakeRustls {
                        tls: tls.clone(),
                        seen: self.tls_seen.clone(),
                    };
                    let connected = self.config.connect(make).await;
                    let (client, connection) = connected.map_err(|e| self.refused(e))?;
                    tokio::spawn(async move {
                        let _ = connection.await;
                    });
                    Ok(client)
                }
                None => {
                    let connected = self.config.connect(NoTls).await;
                    let (client, connection) = connected.map_err(classify)?;
                    tokio::spawn(async move {
                        let _ = connection.await;
                    });
                    Ok(client)
                }
            }
        };
        let client = within(self.connect_timeout, "the PostgreSQL handshake", handshake).await?;
        let mut conn = PgConn {
            client,
            prepared: HashMap::new(),
        };
        if self.tables_ready.load(Ordering::Relaxed) {
            for sql in self.sql.ahead() {
                conn.statement(&sql).await?;
            }
        }
        Ok(conn)
    }

    /// A failed connection over TLS as one line: the driver's "server does not support
    /// TLS" said with the setting that asked for it.
    fn refused(&self, error: tokio_postgres::Error) -> DbError {
        let tls = self.tls.as_deref();
        match tls {
            Some(tls) if error.to_string().contains("server does not support TLS") => {
                crate::db::tls::server_refused(tls, "it answered N to SSLRequest")
            }
            _ => classify(error),
        }
    }

    /// Opens every connection again, preparing the statements on each (the tables are
    /// there now).
    pub(super) async fn prepare_everywhere(&self) -> Result<(), DbError> {
        self.tables_ready.store(true, Ordering::Relaxed);
        for connection in &self.connections {
            let mut slot = connection.lock().await;
            *slot = None;
            *slot = Some(self.open().await?);
        }
        if let Some(lean) = &self.lean {
            lean.reopen_all().await?;
        }
        Ok(())
    }

    /// A free connection if there is one, else the next in turn; open if closed.
    pub(super) async fn conn(&self) -> Result<Held<'_>, DbError> {
        let n = self.connections.len();
        // A lane starts at its own connection: with no more lanes than connections,
        // the first try takes it.
        let start = crate::db::lane().unwrap_or_else(|| self.next.fetch_add(1, Ordering::Relaxed));
        let mut guard = crate::db::queued(async {
            for i in 0..n {
                if let Ok(guard) = self.connections[(start + i) % n].try_lock() {
                    return guard;
                }
            }
            self.connections[start % n].lock().await
        })
        .await;
        if guard.as_ref().is_none_or(|c| c.client.is_closed()) {
            *guard = None;
            *guard = Some(self.open().await?);
        }
        Ok(Held(guard))
    }

    /// hatshop's tables that the current schema holds.
    pub(super) async fn existing_tables(&self, conn: &PgConn) -> Result<Vec<String>, DbError> {
        let rows = conn
            .client
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()",
                &[],
            )
            .await
            .map_err(classify)?;
        let mut names = Vec::new();
        for row in &rows {
            let name: String = get(row, 0)?;
            if TABLES.contains(&name.as_str()) {
                names.push(name);
            }
        }
        Ok(names)
    }
}
