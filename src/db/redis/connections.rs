//! Redis's connections: where and as whom to log in (from the URL, else the password
//! redis-cli reads from REDISCLI_AUTH; TLS by `rediss://`, as redis-cli's `--tls`,
//! `--cacert`, `--cert`, `--key` and `--insecure`), for the `redis` crate and hatshop's
//! own wire alike; the connection manager's slots a lane takes (one lane each, or
//! `pipeline` lanes sharing one), and a lane's own connection over hatshop's wire.

use std::sync::atomic::Ordering;

use redis::aio::ConnectionManager;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::RedisStore;
use super::errors::classify;
use super::wire::{LeanConn, Login, Reply};
use crate::db::tls::{TlsFacts, TlsMode, TlsSettings, named_file};
use crate::db::wire::LaneSlots;
use crate::db::{ConnectOptions, DbError, DbUrl, ErrorKind, Setting, Settings, Value};

/// TLS as redis-cli takes it: `rediss://` (or `tls`), the CA, the client's
/// certificate and key, and `insecure`.
pub(super) const TLS_SETTINGS: [Setting; 5] = [
    Setting {
        name: crate::db::TLS_SWITCH,
        value: Value::Switch,
        default: "false",
        help: "TLS, as a rediss:// URL says (redis-cli --tls): the server's certificate checked against cacert, or the system's CAs, and made out to the host",
    },
    Setting {
        name: "cacert",
        value: Value::Text("PATH"),
        default: "",
        help: "the CA that signs the server's certificate, PEM (redis-cli --cacert)",
    },
    Setting {
        name: "cert",
        value: Value::Text("PATH"),
        default: "",
        help: "the client's certificate, PEM, for a server with tls-auth-clients (redis-cli --cert)",
    },
    Setting {
        name: "key",
        value: Value::Text("PATH"),
        default: "",
        help: "the client's private key, PEM (redis-cli --key)",
    },
    Setting {
        name: "insecure",
        value: Value::Switch,
        default: "false",
        help: "TLS without checking the server's certificate (redis-cli --insecure)",
    },
];

/// The TLS the settings ask for.
fn tls_settings(settings: &Settings) -> TlsSettings {
    if !settings.switch(crate::db::TLS_SWITCH) {
        return TlsSettings::disabled();
    }
    let file = |name: &'static str| settings.given_text(name).map(|path| named_file(name, path));
    let insecure = settings.switch("insecure");
    TlsSettings {
        mode: if insecure {
            TlsMode::Require
        } else {
            TlsMode::VerifyFull
        },
        mode_source: if insecure {
            "rediss:// with insecure".into()
        } else {
            "rediss://".into()
        },
        ca: file("cacert").filter(|_| !insecure),
        cert: file("cert"),
        key: file("key"),
    }
}

/// Where and as whom to log in, from the URL (the password else from REDISCLI_AUTH):
/// the database is its number.
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
    // `redis://PASSWORD@host` is the default user's password, as redis-cli -u reads it;
    // with REDISCLI_AUTH set, the word is the user that password is for.
    let user = address.user.filter(|u| !u.is_empty());
    let from_env = std::env::var("REDISCLI_AUTH").is_ok_and(|p| !p.is_empty());
    let (user, url_password) = match (user, address.password) {
        (Some(word), None) if !from_env => (None, Some(word)),
        given => given,
    };
    let (password, password_from) = match url_password {
        Some(password) => (Some(password), Some("URL")),
        None => match std::env::var("REDISCLI_AUTH")
            .ok()
            .filter(|p| !p.is_empty())
        {
            Some(password) => {
                crate::secrets::register(&password);
                (Some(password), Some("REDISCLI_AUTH"))
            }
            None => (None, None),
        },
    };
    let tls_settings = tls_settings(&options.settings);
    let tls = tls_settings.client(&host, port)?;
    Ok(Login {
        host,
        port,
        user,
        password,
        password_from,
        db,
        connect_timeout: options.connect_timeout,
        tls,
        tls_settings,
    })
}

/// hatshop's own wire logs in first and asks PING, every reply bounded: a certificate
/// or handshake that fails is said in one line that names why, which the crate's errors
/// do not carry; a server that answers in no Redis protocol (another database's port, a
/// line without end) is refused before the crate reads, and buffers, what it sends. The
/// TLS spoken, for run.json.
pub(super) async fn probe(login: &Login) -> Result<Option<TlsFacts>, DbError> {
    let mut conn = LeanConn::open(login).await?;
    let asked = crate::db::wire::within(login.connect_timeout, "PING", conn.answers_ping()).await;
    match asked {
        Ok(()) => Ok(conn.tls_facts()),
        Err(e) => Err(DbError::new(
            e.kind,
            format!(
                "{}:{} did not answer PING in Redis's protocol ({}): is it a Redis server?",
                login.host,
                login.port,
                e.message
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect::<String>()
            ),
        )),
    }
}

/// A connection the `redis` crate could not open, as one line: a failed TLS
/// handshake said as hatshop says it, and a silent one as the plain port it likely is.
pub(super) fn refused(
    error: redis::RedisError,
    login: &Login,
    limit: std::time::Duration,
) -> DbError {
    let Some(tls) = &login.tls else {
        // Something that is not Redis (PostgreSQL, MySQL) takes the connection and drops
        // it on a command it cannot read: "broken pipe" alone would not say so.
        let what = if error.is_connection_dropped() {
            "took the connection and closed it on hatshop's first command"
        } else if matches!(
            error.kind(),
            redis::ErrorKind::Parse | redis::ErrorKind::UnexpectedReturnType
        ) {
            "answered in something other than Redis's protocol"
        } else {
            return classify(error);
        };
        let classified = classify(error);
        return DbError::new(
            ErrorKind::Connection,
            format!(
                "{}:{} {what} ({}): is it a Redis server?",
                login.host,
                login.port,
                // The crate quotes the server's bytes: shown printable, and short.
                classified
                    .message
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect::<String>()
            ),
        );
    };
    if let Some(tls_error) = crate::db::tls::tls_error_in(&error) {
        return crate::db::tls::describe(tls_error, tls);
    }
    let classified = classify(error);
    match classified.kind {
        ErrorKind::Timeout => DbError::new(
            ErrorKind::Timeout,
            format!(
                "no answer from {} to the TLS handshake within {} s: a port without TLS does not answer one",
                tls.target,
                limit.as_secs_f64()
            ),
        ),
        _ => classified,
    }
}

/// The `redis` crate's client for the login: over TLS with the login's files, where
/// it asks for TLS.
pub(super) fn client_of(login: &Login) -> Result<redis::Client, DbError> {
    let info = connection_info(login)?;
    if login.tls.is_none() {
        return redis::Client::open(info).map_err(classify);
    }
    // The files were read as PEM when the login was made (`TlsSettings::client`): a
    // bad one was a line naming it then.
    let pem = |file: &Option<crate::db::tls::NamedFile>| -> Result<Option<Vec<u8>>, DbError> {
        let Some(file) = file else {
            return Ok(None);
        };
        crate::files::read_bounded(&file.path, crate::files::SETTINGS_FILE_LIMIT)
            .map(Some)
            .map_err(|e| {
                DbError::new(
                    ErrorKind::Connection,
                    format!("{}={}: {e}", file.setting, file.path.display()),
                )
            })
    };
    let settings = &login.tls_settings;
    let client_tls = match (pem(&settings.cert)?, pem(&settings.key)?) {
        (Some(client_cert), Some(client_key)) => Some(redis::ClientTlsConfig {
            client_cert,
            client_key,
        }),
        _ => None,
    };
    let certificates = redis::TlsCertificates {
        client_tls,
        root_cert: pem(&settings.ca)?,
    };
    redis::Client::build_with_tls(info, certificates).map_err(classify)
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
    let address = match &login.tls {
        None => redis::ConnectionAddr::Tcp(login.host.clone(), login.port),
        Some(tls) => redis::ConnectionAddr::TcpTls {
            host: login.host.clone(),
            port: login.port,
            insecure: tls.mode != TlsMode::VerifyFull,
            tls_params: None,
        },
    };
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
                let conn = LeanConn::open(&self.login).await?;
                *self.tls_spoken.lock().unwrap_or_else(|p| p.into_inner()) = conn.tls_facts();
                *slots.slot(i).await = Some(conn);
            }
        }
        Ok(())
    }
}
