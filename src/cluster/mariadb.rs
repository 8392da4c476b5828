//! A private MariaDB server from Debian's `mariadb-server`: its own data folder,
//! socket, pid file and port on 127.0.0.1; it never reads /etc/mysql.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};

use super::{
    Home, LocalServer, ServerKind, ServerRecord, StartOptions, ensure_packages, now_rfc3339,
    process, wait_for_port,
};

const HOST: &str = "127.0.0.1";

/// MariaDB serves the `mysql` store.
pub struct Mariadb;

impl LocalServer for Mariadb {
    const NAME: &'static str = "mysql";
    const ALIASES: &'static [&'static str] = &["mariadb"];
    const ABOUT: &'static str = "MariaDB from Debian's mariadb-server";

    fn start(_home: &Home, dir: &Path, options: &StartOptions) -> Result<ServerRecord> {
        start(dir, options)
    }
}

fn start(dir: &Path, options: &StartOptions) -> Result<ServerRecord> {
    let mariadbd = ensure_packages(
        "mariadbd",
        &["mariadb-server"],
        options.install,
        &["/usr/sbin"],
    )?;
    let port = match options.port {
        Some(port) => port,
        None => process::free_port(HOST, 3306)?,
    };
    let data = dir.join("data");
    let log_file = dir.join("error.log");
    let cnf = dir.join("my.cnf");
    let user_line = if process::is_root() {
        "user = root\n"
    } else {
        ""
    };
    std::fs::write(
        &cnf,
        format!(
            "[mariadbd]\n{user_line}datadir = {data}\nsocket = {dir}/mysqld.sock\npid-file = {dir}/mysqld.pid\n\
             log-error = {log}\nbind-address = {HOST}\nport = {port}\nskip-name-resolve\n\
             performance_schema = OFF\ninnodb_buffer_pool_size = 256M\ninnodb_log_file_size = 64M\n\
             max_connections = 500\ncharacter-set-server = utf8mb4\ncollation-server = utf8mb4_general_ci\n\
             [client]\nsocket = {dir}/mysqld.sock\n",
            data = data.display(),
            dir = dir.display(),
            log = log_file.display(),
        ),
    )
    .with_context(|| format!("cannot write {}", cnf.display()))?;

    if !data.join("mysql").exists() {
        crate::note!("initialising {} …", data.display());
        process::run_command(
            Command::new("mariadb-install-db")
                .arg(format!("--defaults-file={}", cnf.display()))
                .args(["--auth-root-authentication-method=normal", "--skip-test-db"]),
            "mariadb-install-db",
        )?;
    }

    let out = File::create(dir.join("mariadbd.out"))?;
    let child = Command::new(&mariadbd)
        .arg(format!("--defaults-file={}", cnf.display()))
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        // Its own process group: a Ctrl-C meant for hatshop does not reach it.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {}", mariadbd.display()))?;
    let pid = child.id();
    wait_for_port(
        HOST,
        port,
        pid,
        Duration::from_secs(60),
        "mariadbd",
        &log_file,
    )?;

    let client = |sql: &str| {
        process::run_command(
            Command::new("mariadb")
                .arg(format!("--defaults-file={}", cnf.display()))
                .args(["-uroot", "-N", "-e", sql]),
            "mariadb client",
        )
    };
    client(
        "CREATE USER IF NOT EXISTS 'root'@'127.%'; \
         GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.%' WITH GRANT OPTION; \
         CREATE DATABASE IF NOT EXISTS hatshop;",
    )?;
    let version = client("SELECT VERSION()")?.trim().to_string();
    Ok(ServerRecord {
        kind: ServerKind::find(Mariadb::NAME).expect("listed"),
        pid,
        url: format!("mysql://root@{HOST}:{port}/hatshop"),
        version,
        host: HOST.into(),
        port,
        data_dir: data,
        log_file,
        started_at: now_rfc3339(),
        settings: Default::default(),
    })
}
