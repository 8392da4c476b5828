//! Redis's connections: where and as whom to log in (from the URL, for the `redis`
//! crate and hatshop's own wire alike), the connection manager's slots a lane takes
//! (one lane each, or `pipeline` lanes sharing one), and a lane's own connection over
//! hatshop's wire.

use std::sync::atomic::Ordering;

use redis::aio::ConnectionManager;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::RedisStore;
use super::errors::classify;
use super::wire::{LeanConn, Login, Reply};
use crate::db::wire::LaneSlots;
use crate::db::{ConnectOptions, DbError, DbUrl, ErrorKind};

/// Where and as whom to log in, from the URL: the database is its number.
pub(super) fn login_of(url: &DbUrl, options: &ConnectOptions) -> Result<Login, DbError> {
    let address = url
        .address(6379)
        .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
    let (host, port) = address.hosts[0].clone();
    let db: i64 = match address.name.as_deref() {
        None => 0,
        Some(n) => n.parse().map_err(|_| {
            DbError::other(format!("{url}: the database must be a number, got '{n}'"))
        })?,
    };
    Ok(Login {
        host,
        port,
        user: address.user.filter(|u| !u.is_empty()),
        password: address.password,
        db,
        connect_timeout: options.connect_timeout,
    })
}

/// The same login as the `redis` crate takes it.
pub(super) fn connection_info(login: &Login) -> Result<redis::ConnectionInfo, DbError> {
    let mut credentials = redis::RedisConnectionInfo::default().set_db(login.db);
    if let Some(user) = &login.user {
        credentials = credentials.set_username(user);
    }
    if let Some(password) = &login.password {
        credentials = credentials.set_password(password);
    }
    let address = redis::ConnectionAddr::Tcp(login.host.clone(), login.port);
    Ok(redis::IntoConnectionInfo::into_connection_info(address)
        .map_err(classify)?
        .set_redis_settings(credentials))
}

/// A connection and how many lanes may use it at once.
pub(super) struct Slot {
    pub(super) conn: ConnectionManager,
    pub(super) users: Semaphore,
}

/// A lane's use of a connection: held until dropped.
pub(super) struct Held<'a> {
    pub(super) conn: ConnectionManager,
    _permit: SemaphorePermit<'a>,
}

impl RedisStore {
    /// A connection with room for one more request; the wait for one is queue time.
    pub(super) async fn conn(&self) -> Result<Held<'_>, DbError> {
        crate::db::queued(self.take_slot()).await
    }

    /// The next slot with room, a free one first; else wait for the next in turn.
    async fn take_slot(&self) -> Result<Held<'_>, DbError> {
        let n = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            let slot = &self.slots[(start + i) % n];
            if let Ok(permit) = slot.users.try_acquire() {
                return Ok(Held {
                    conn: slot.conn.clone(),
                    _permit: permit,
                });
            }
        }
        let slot = &self.slots[start % n];
        let permit = slot
            .users
            .acquire()
            .await
            .map_err(|_| DbError::other("connection slot closed"))?;
        Ok(Held {
            conn: slot.conn.clone(),
            _permit: permit,
        })
    }

    /// Runs a key-value command on a lane's own connection (hatshop's own wire).
    pub(super) async fn lean(
        &self,
        slots: &LaneSlots<LeanConn>,
        args: &[&[u8]],
    ) -> Result<Reply, DbError> {
        let mut held = slots.take(|| LeanConn::open(&self.login)).await?;
        held.as_mut().expect("opened by take").command(args).await
    }

    /// Opens every lane's own connection, so none is opened while measuring.
    pub(super) async fn open_lean(&self) -> Result<(), DbError> {
        if let Some(slots) = &self.lean {
            for i in 0..slots.len() {
                *slots.slot(i).await = Some(LeanConn::open(&self.login).await?);
            }
        }
        Ok(())
    }
}
