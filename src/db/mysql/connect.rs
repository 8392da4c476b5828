//! Opening the store: one pool per host of the URL, each connection keeping its
//! prepared statements for its life, and what the first host says it is.

use std::sync::atomic::{AtomicBool, AtomicU64};

use mysql_async::prelude::*;
use mysql_async::{DriverError, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};

use super::conns::HostConns;
use super::login::login_retried;
use super::sbtest;
use super::wire::{LeanConn, Login};
use super::{MAX_ITEMS_PER_INSERT, MysqlStore, Route, classify};
use crate::db::peer_table;
use crate::db::sql::{Placeholders, Statements};
use crate::db::{ConnectOptions, DbError, DbUrl, ErrorKind, Setting, Settings, StoreKind, Value};

/// Connections per host for setup and reading back, apart from the operations' own.
const ADMIN_POOL: usize = 2;

impl StoreKind for MysqlStore {
    const SCHEME: &'static str = "mysql";
    const ALIASES: &'static [&'static str] = &["mariadb"];
    const ABOUT: &'static str = "MySQL or MariaDB (what the server says it is goes in run.json)";
    const EXAMPLE: &'static str = "mysql://root@127.0.0.1:3306/hatshop?connections=4";
    const LOGIN: bool = true;
    const SETTINGS: &'static [Setting] = &[
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
            help: "in runs of key-value events alone, send the statements over hatshop's own lean client of the binary protocol (mysql_native_password or no password) or through mysql_async, as every other run does",
        },
    ];

    /// One lane per pooled connection: the study's pool of 4.
    fn default_concurrency(settings: &Settings) -> usize {
        crate::db::sql::connections_or(settings, 4)
    }

    /// One thread at 2 to 4 connections, where two did no more selects and cost more
    /// CPU per select in their wake-ups; at 1 connection and above 4, one per core,
    /// which did more there.
    fn client_threads(concurrency: usize) -> Option<usize> {
        (2..=4).contains(&concurrency).then_some(1)
    }

    /// sysbench's `sbtest` shape holds values of at most 120 bytes.
    fn check_value_size(settings: &Settings, len: usize) -> Result<(), DbError> {
        if sbtest::TABLE.chosen(settings) {
            sbtest::TABLE.check_value_size(len)?;
        }
        Ok(())
    }

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
        let mut pools = Vec::with_capacity(address.hosts.len());
        let mut hosts = Vec::with_capacity(address.hosts.len());
        for (host, port) in &address.hosts {
            let (name, opts, login) =
                host_options(host, *port, &address, sync_wait, options.connect_timeout);
            hosts.push((name.clone(), opts.clone(), login));
            pools.push((name, Pool::new(opts)));
        }
        let (version, galera) = server_facts(&pools, options.existing_only).await?;
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
        })
    }
}

/// The driver's options and hatshop's own wire login for one host of the URL.
fn host_options(
    host: &str,
    port: u16,
    address: &crate::db::NetworkParts,
    sync_wait: Option<u64>,
    connect_timeout: std::time::Duration,
) -> (String, Opts, Login) {
    let mut opts = OptsBuilder::default()
        .ip_or_hostname(host.to_string())
        .tcp_port(port)
        .prefer_socket(false)
        .user(address.user.clone().or(Some("root".into())))
        .pass(address.password.clone())
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
    let opts = Opts::from(opts);
    let name = format!("{host}:{port}");
    let login = Login {
        host: host.to_string(),
        port,
        user: address.user.clone().unwrap_or_else(|| "root".into()),
        password: address.password.clone(),
        database: address.name.clone().unwrap_or_else(|| "hatshop".into()),
        sync_wait,
        connect_timeout,
    };
    (name, opts, login)
}

/// The server's product and version, and whether it is a Galera node. Every host must
/// answer for a run; reading back (`existing_only`: verify) needs just one.
async fn server_facts(
    pools: &[(String, Pool)],
    existing_only: bool,
) -> Result<(String, bool), DbError> {
    let mut version = None;
    let mut galera = false;
    let mut unreachable = None;
    for (host, pool) in pools {
        let mut conn = match login_retried(|| pool.get_conn()).await {
            Ok(conn) => conn,
            Err(e) => {
                let error = classify(e).context(format!("host {host}"));
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

/// Whether hatshop's own wire can log in to the server: not when the server asks for
/// an authentication plugin other than mysql_native_password.
async fn speaks_own_wire(login: &Login) -> Result<bool, DbError> {
    match LeanConn::open(login).await {
        Ok(conn) => {
            conn.quit().await;
            Ok(true)
        }
        Err(mysql_async::Error::Driver(DriverError::UnknownAuthPlugin { .. })) => Ok(false),
        Err(e) => Err(classify(e).context(format!("host {}:{}", login.host, login.port))),
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
