//! Opening the store: one pool per host of the URL, each connection keeping its
//! prepared statements for its life, and what the first host says it is.

use std::sync::atomic::{AtomicBool, AtomicU64};

use mysql_async::prelude::*;
use mysql_async::{
    ClientIdentity, DriverError, IoError, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts,
    SslOpts,
};

use super::conns::HostConns;
use super::login::login_retried;
use super::option_file::{self, SSL_MODE};
use super::sbtest;
use super::wire::{LeanConn, Login, Spoken, spoken};
use super::{MAX_ITEMS_PER_INSERT, MysqlStore, Route, classify};
use crate::db::login::Login as FoundLogin;
use crate::db::peer_table;
use crate::db::sql::{Placeholders, Statements};
use crate::db::tls::{
    FILE_SETTINGS, Tls, TlsFacts, TlsMode, describe, server_refused, tls_error_in,
};
use crate::db::{
    ConnectOptions, DbError, DbUrl, DeclaredStore, ErrorKind, Setting, StoreDeclarations, Value,
};

/// Connections per host for setup and reading back, apart from the operations' own.
const ADMIN_POOL: usize = 2;

/// The settings MySQL and MariaDB take (URL `?key=value` or flags).
const SETTINGS: &[Setting] = &[
    crate::db::sql::CONNECTIONS,
    Setting {
        name: "route",
        value: Value::Choice(&["round-robin", "first", "random"]),
        default: "round-robin",
        help: "with several hosts: each operation to the next host in turn (the study's load balancing), always the first, or one at random",
    },
    Setting {
        name: "sync_wait",
        value: Value::Count { min: 0 },
        default: "",
        help: "Galera wsrep_sync_wait on every connection (1: reads wait for the writes before them, on any node)",
    },
    Setting {
        name: peer_table::SETTING,
        value: Value::Choice(&["kv", sbtest::TABLE.name]),
        default: "kv",
        help: "key-value records in hatshop's table (k VARCHAR(32), v MEDIUMBLOB) or in sysbench's sbtest shape (id INT, k INT indexed, c VARBINARY(120) holding the value, pad CHAR(60)), for the race with sysbench",
    },
    Setting {
        name: "kv_wire",
        value: Value::Choice(&["own", "mysql_async"]),
        default: "own",
        help: "in runs of key-value events alone, send the statements over hatshop's own lean client of the binary protocol (TLS, and mysql_native_password, caching_sha2_password or client_ed25519 logins) or through mysql_async, as every other run does",
    },
    SSL_MODE,
    FILE_SETTINGS[0],
    FILE_SETTINGS[1],
    FILE_SETTINGS[2],
];

impl DeclaredStore for MysqlStore {
    const DECLARED: StoreDeclarations = StoreDeclarations {
        aliases: &["mariadb"],
        login: true,
        db_time: Some(super::db_time::DB_TIME),
        // One thread at 2 to 4 connections, where two did no more selects and cost more
        // CPU per select in their wake-ups; at 1 connection and above 4, one per core,
        // which did more there.
        client_threads: |concurrency| (2..=4).contains(&concurrency).then_some(1),
        // sysbench's `sbtest` shape holds values of at most 120 bytes.
        check_value_size: |settings, len| {
            if sbtest::TABLE.chosen(settings) {
                sbtest::TABLE.check_value_size(len)?;
            }
            Ok(())
        },
        ..StoreDeclarations::new(
            "mysql",
            "MySQL or MariaDB (what the server says it is goes in run.json)",
            "mysql://root@127.0.0.1:3306/hatshop?connections=4",
            SETTINGS,
            // One lane per pooled connection: the study's pool of 4.
            |settings| crate::db::sql::connections_or(settings, 4),
        )
    };

    async fn connect(url: &DbUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        let pool_size = crate::db::sql::connections_or(&options.settings, options.concurrency);
        let address = url
            .address(3306)
            .map_err(|e| DbError::new(ErrorKind::Connection, e))?;
        let route = match options.settings.choice("route") {
            "first" => Route::First,
            "random" => Route::Random,
            _ => Route::RoundRobin,
        };
        let sync_wait: Option<u64> = options
            .settings
            .given_text("sync_wait")
            .and_then(|v| v.parse().ok());
        let sbtest = sbtest::TABLE.chosen(&options.settings);
        let login = option_file::login(
            &address,
            &options.settings,
            option_file::home().as_deref(),
            |name| std::env::var(name).ok(),
        )?;
        let mut pools = Vec::with_capacity(address.hosts.len());
        let mut hosts = Vec::with_capacity(address.hosts.len());
        let mut tls_of_hosts = Vec::with_capacity(address.hosts.len());
        let mut tls_spoken = None;
        for (host, port) in &address.hosts {
            let own = own_login(
                host,
                *port,
                &address,
                &login,
                sync_wait,
                options.connect_timeout,
            )?;
            let (tls, spoken) = driver_tls(&own).await?;
            tls_spoken = tls_spoken.or(spoken);
            let opts = driver_options(&own, &address, &login, tls.as_ref(), sync_wait);
            let name = format!("{host}:{port}");
            hosts.push((name.clone(), opts.clone(), own));
            pools.push((name, Pool::new(opts)));
            tls_of_hosts.push(tls);
        }
        let (version, galera) = server_facts(&pools, &tls_of_hosts, options.existing_only).await?;
        let own_wire = options.key_value_only
            && options.settings.choice("kv_wire") == "own"
            && speaks_own_wire(&hosts[0].2).await?;
        let conns = hosts
            .into_iter()
            .map(|(name, opts, login)| {
                HostConns::new(name, opts, own_wire.then_some(login), pool_size)
            })
            .collect();
        let mut sql = Statements::new(Placeholders::Question);
        if sbtest {
            sbtest::statements(&mut sql);
        }
        Ok(MysqlStore {
            conns,
            pools,
            route,
            next: AtomicU64::new(0),
            sync_wait,
            sbtest,
            galera,
            target: url.to_string(),
            version,
            sql,
            load: Default::default(),
            server_timing: AtomicBool::new(false),
            own_wire,
            tls: TlsInUse {
                asked: login.tls.mode_source.clone(),
                on: tls_of_hosts[0].is_some(),
                spoken: tls_spoken,
            },
            password_from: login.password_from,
        })
    }
}

/// What TLS a run's connections speak, for run.json.
pub(super) struct TlsInUse {
    /// The setting that asked (`ssl-mode=REQUIRED`).
    pub asked: String,
    /// Whether the first host is reached over TLS.
    pub on: bool,
    /// What the own wire's probe connection spoke.
    pub spoken: Option<crate::db::tls::TlsFacts>,
}

impl TlsInUse {
    /// As run.json's settings say it.
    pub fn describe(&self) -> String {
        match (&self.spoken, self.on) {
            (Some(facts), _) => format!("{} ({})", facts.summary(), self.asked),
            (None, true) => format!("on ({})", self.asked),
            (None, false) => format!("off ({})", self.asked),
        }
    }
}

/// The TLS the driver speaks to one host, and what it is, from a login of the own
/// wire first: with PREFERRED, TLS only where the server offers it (mysql_async has no
/// PREFERRED of its own); with a mode that requires it, a failed handshake said in
/// one line that names why.
async fn driver_tls(own: &Login) -> Result<(Option<Tls>, Option<TlsFacts>), DbError> {
    let Some(tls) = &own.tls else {
        return Ok((None, None));
    };
    let spoken = spoken(own).await.map_err(|e| {
        login_failed(e, Some(tls)).context(format!("host {}:{}", own.host, own.port))
    })?;
    Ok(match spoken {
        Spoken::Tls(facts) => (Some(tls.clone()), facts),
        Spoken::Clear => (None, None),
    })
}

/// hatshop's own wire's login to one host of the URL.
fn own_login(
    host: &str,
    port: u16,
    address: &crate::db::NetworkParts,
    login: &FoundLogin,
    sync_wait: Option<u64>,
    connect_timeout: std::time::Duration,
) -> Result<Login, DbError> {
    Ok(Login {
        host: host.to_string(),
        port,
        user: login.user.clone(),
        password: login.password.clone(),
        database: address.name.clone().unwrap_or_else(|| "hatshop".into()),
        sync_wait,
        connect_timeout,
        tls: login.tls.client(host, port)?,
    })
}

/// The driver's options for the host of `own`, over `tls` where it is given.
fn driver_options(
    own: &Login,
    address: &crate::db::NetworkParts,
    login: &FoundLogin,
    tls: Option<&Tls>,
    sync_wait: Option<u64>,
) -> Opts {
    let mut opts = OptsBuilder::default()
        .ip_or_hostname(own.host.clone())
        .tcp_port(own.port)
        .prefer_socket(false)
        .user(Some(login.user.clone()))
        .pass(login.password.clone())
        .db_name(address.name.clone().or(Some("hatshop".into())))
        .client_found_rows(true)
        .stmt_cache_size(MAX_ITEMS_PER_INSERT + 32)
        .pool_opts(
            PoolOpts::default()
                .with_constraints(PoolConstraints::new(0, ADMIN_POOL).expect("0 <= max is valid"))
                .with_reset_connection(false),
        );
    if let Some(wait) = sync_wait {
        opts = opts.init(vec![format!("SET SESSION wsrep_sync_wait = {wait}")]);
    }
    if let Some(tls) = tls {
        opts = opts.ssl_opts(ssl_opts(tls, &login.tls));
    }
    Opts::from(opts)
}

/// mysql_async's TLS options for the mode: its checks as the mode asks, the CA and
/// the client's files.
fn ssl_opts(tls: &Tls, settings: &crate::db::tls::TlsSettings) -> SslOpts {
    let mut opts = SslOpts::default();
    match tls.mode {
        TlsMode::Disable | TlsMode::Prefer | TlsMode::Require => {
            opts = opts.with_danger_accept_invalid_certs(true);
        }
        TlsMode::VerifyCa => opts = opts.with_danger_skip_domain_validation(true),
        TlsMode::VerifyFull => {}
    }
    if let Some(ca) = &settings.ca {
        opts = opts
            .with_root_certs(vec![ca.path.clone().into()])
            .with_disable_built_in_roots(true);
    }
    if let (Some(cert), Some(key)) = (&settings.cert, &settings.key) {
        opts = opts.with_client_identity(Some(ClientIdentity::new(
            cert.path.clone().into(),
            key.path.clone().into(),
        )));
    }
    opts
}

/// A login's failure as one line: TLS failures said with the setting that asked.
fn login_failed(error: mysql_async::Error, tls: Option<&Tls>) -> DbError {
    use mysql_async::Error as E;
    if let Some(tls) = tls {
        if let Some(tls_error) = tls_error_in(&error) {
            return describe(tls_error, tls);
        }
        if let E::Driver(DriverError::NoClientSslFlagFromServer) = error {
            return server_refused(tls, "its greeting offers no SSL");
        }
    }
    match &error {
        // The own wire's TLS failures, in its words already.
        E::Io(IoError::Io(io)) if io.to_string().starts_with("TLS to ") => {
            DbError::new(ErrorKind::Connection, io.to_string())
        }
        _ => classify(error),
    }
}

/// The server's product and version, and whether it is a Galera node. Every host must
/// answer for a run; reading back (`existing_only`: verify) needs just one.
async fn server_facts(
    pools: &[(String, Pool)],
    tls: &[Option<Tls>],
    existing_only: bool,
) -> Result<(String, bool), DbError> {
    let mut version = None;
    let mut galera = false;
    let mut unreachable = None;
    for ((host, pool), tls) in pools.iter().zip(tls) {
        let mut conn = match login_retried(|| pool.get_conn()).await {
            Ok(conn) => conn,
            Err(e) => {
                let error = login_failed(e, tls.as_ref()).context(format!("host {host}"));
                if !existing_only {
                    return Err(error);
                }
                unreachable = Some(error);
                continue;
            }
        };
        let text: String = conn
            .query_first("SELECT VERSION()")
            .await
            .map_err(classify)?
            .unwrap_or_default();
        version = Some(product_version(&text));
        galera = conn
            .query_first::<i64, _>("SELECT @@wsrep_on")
            .await
            .ok()
            .flatten()
            .is_some_and(|on| on == 1);
        if existing_only {
            break;
        }
    }
    let version = match (version, unreachable) {
        (Some(version), _) => version,
        (None, Some(error)) => return Err(error),
        (None, None) => String::new(),
    };
    Ok((version, galera))
}

/// Whether hatshop's own wire can log in to the server: not where the login needs
/// what it does not speak (a plugin of its own, or caching_sha2_password's full login
/// without TLS); then a line says why.
async fn speaks_own_wire(login: &Login) -> Result<bool, DbError> {
    match LeanConn::open(login).await {
        Ok(conn) => {
            conn.quit().await;
            Ok(true)
        }
        Err(mysql_async::Error::Driver(DriverError::UnknownAuthPlugin { name })) => {
            crate::console::note!(
                "note: the login asks for {name}, which hatshop's own MySQL client does not speak: mysql_async carries the key-value statements (run.json: kv_wire)"
            );
            Ok(false)
        }
        Err(e) => Err(login_failed(e, login.tls.as_ref())
            .context(format!("host {}:{}", login.host, login.port))),
    }
}

/// "10.11.11-MariaDB-0+deb12u1" → "MariaDB 10.11.11"; "8.0.36" → "MySQL 8.0.36".
fn product_version(version: &str) -> String {
    let number = version.split('-').next().unwrap_or(version);
    if version.contains("MariaDB") {
        format!("MariaDB {number}")
    } else {
        format!("MySQL {number}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_names_its_product() {
        assert_eq!(
            product_version("10.11.11-MariaDB-0+deb12u1"),
            "MariaDB 10.11.11"
        );
        assert_eq!(product_version("8.0.36"), "MySQL 8.0.36");
    }
}
