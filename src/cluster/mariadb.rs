//! A private MariaDB server from Debian's `mariadb-server`: its own data folder,
//! socket, pid file and port on 127.0.0.1; it never reads /etc/mysql. With `--tls`,
//! clients over TCP must speak TLS. The pieces a
//! Galera node shares with it (config, first install, the client) live here too.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};

use super::certs::{self, ServerCerts};
use super::{
    DeclaredServer, Home, LOOPBACK, Launch, NodeRecord, ServerRecord, StartOptions,
    ensure_packages, node_record, process, wait_for_port,
};

/// MariaDB serves the `mysql` store.
pub struct Mariadb;

impl DeclaredServer for Mariadb {
    const NAME: &'static str = "mariadb";
    const ALIASES: &'static [&'static str] = &["mysql"];
    // Its first name: servers started before the rename are found where they are.
    const FOLDER: &'static str = "mysql";
    const ABOUT: &'static str = "MariaDB from Debian's mariadb-server (one server)";
    const STORE: &'static str = "mysql";

    fn start(launch: &Launch) -> Result<ServerRecord> {
        let dir = &launch.dir;
        let mariadbd = mariadbd(launch.options.install, &[])?;
        let port = launch.port_or(LOOPBACK, 3306)?;
        let tls = match launch.tls() {
            true => Some(certs::server_certs(dir, &[LOOPBACK])?),
            false => None,
        };
        let cnf = write_cnf(
            dir,
            LOOPBACK,
            port,
            &tls.as_ref().map(tls_lines).unwrap_or_default(),
        )?;
        if !dir.join("data/mysql").exists() {
            install_db(dir, &cnf)?;
        }
        // Killed unless the start gets to its end: a start that fails once the server
        // is up (its user not made, its version not read) leaves none that no record
        // names, holding the port.
        let mut spawned = process::Spawned::default();
        let pid = spawned.push(spawn(&mariadbd, dir, &cnf, &[])?);
        let log_file = dir.join("error.log");
        wait_for_port(
            LOOPBACK,
            port,
            pid,
            Duration::from_secs(60),
            "mariadbd",
            &log_file,
        )?;
        create_user_and_database(&cnf)?;
        let version = product(client(&cnf, "SELECT VERSION()")?.trim());
        let node = node_record(1, LOOPBACK, port, pid, dir, dir.join("data"), log_file);
        let url = with_tls(
            format!("mysql://root@{LOOPBACK}:{port}/hatshop"),
            tls.as_ref(),
        );
        spawned.keep();
        Ok(ServerRecord::of::<Self>(url, version, vec![node]))
    }

    fn restart_node(home: &Home, record: &ServerRecord, _node: usize) -> Result<NodeRecord> {
        let again = StartOptions::default();
        Ok(Self::start(&Launch::again(home, record, &again))?
            .nodes
            .remove(0))
    }
}

/// `[mariadbd]` lines that turn TLS on for clients over TCP and require it (the
/// server's own socket is secure transport already).
pub fn tls_lines(certs: &ServerCerts) -> String {
    format!(
        "ssl-ca = {}\nssl-cert = {}\nssl-key = {}\nrequire_secure_transport = ON\n",
        certs.ca.display(),
        certs.cert.display(),
        certs.key.display()
    )
}

/// A server's URL with what a client needs to check it over TLS, where it has TLS.
pub fn with_tls(url: String, tls: Option<&ServerCerts>) -> String {
    match tls {
        Some(certs) => format!(
            "{url}?ssl-mode=VERIFY_IDENTITY&ssl-ca={}",
            certs.ca.display()
        ),
        None => url,
    }
}

/// The server program, installing `mariadb-server` (and `more`) when allowed.
pub fn mariadbd(install: bool, more: &[&str]) -> Result<PathBuf> {
    let mut packages = vec!["mariadb-server"];
    packages.extend_from_slice(more);
    ensure_packages("mariadbd", &packages, install, &["/usr/sbin"])
}

/// Writes `dir/my.cnf` for a server on `host:port`; `extra` lines go in `[mariadbd]`.
pub fn write_cnf(dir: &Path, host: &str, port: u16, extra: &str) -> Result<PathBuf> {
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
             log-error = {log}\nbind-address = {host}\nport = {port}\nskip-name-resolve\n\
             performance_schema = ON\nperformance_schema_consumer_events_statements_current = ON\n\
             performance_schema_consumer_events_statements_history = ON\ninnodb_buffer_pool_size = 256M\ninnodb_log_file_size = 64M\n\
             max_connections = 500\ncharacter-set-server = utf8mb4\ncollation-server = utf8mb4_general_ci\n\
             {extra}\
             [client]\nsocket = {dir}/mysqld.sock\n",
            data = data.display(),
            dir = dir.display(),
            log = log_file.display(),
        ),
    )
    .with_context(|| format!("cannot write {}", cnf.display()))?;
    Ok(cnf)
}

/// Makes the system tables of a new data folder.
pub fn install_db(dir: &Path, cnf: &Path) -> Result<()> {
    crate::console::note!("initialising {} …", dir.join("data").display());
    process::run_command(
        Command::new("mariadb-install-db")
            .arg(format!("--defaults-file={}", cnf.display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]),
        "mariadb-install-db",
    )?;
    Ok(())
}

/// Starts `mariadbd` with its config (and `args`) in its own process group.
pub fn spawn(mariadbd: &Path, dir: &Path, cnf: &Path, args: &[String]) -> Result<u32> {
    let out = File::create(dir.join("mariadbd.out"))?;
    let child = Command::new(mariadbd)
        .arg(format!("--defaults-file={}", cnf.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        // Its own process group: a Ctrl-C meant for hatshop does not reach it.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {}", mariadbd.display()))?;
    Ok(child.id())
}

/// Runs SQL through the server's socket as root; the output, tab-separated.
pub fn client(cnf: &Path, sql: &str) -> Result<String> {
    process::run_command(
        Command::new("mariadb")
            .arg(format!("--defaults-file={}", cnf.display()))
            .args(["-uroot", "-N", "-B", "-e", sql]),
        "mariadb client",
    )
}

/// Lets root connect over TCP from loopback, and makes the `hatshop` database.
pub fn create_user_and_database(cnf: &Path) -> Result<()> {
    client(
        cnf,
        "CREATE USER IF NOT EXISTS 'root'@'127.%'; \
         GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.%' WITH GRANT OPTION; \
         CREATE DATABASE IF NOT EXISTS hatshop;",
    )?;
    Ok(())
}

/// "10.11.19-MariaDB-0+deb12u1" → "MariaDB 10.11.19".
pub fn product(version: &str) -> String {
    let number = version.split('-').next().unwrap_or(version);
    if version.contains("MariaDB") {
        format!("MariaDB {number}")
    } else {
        format!("MySQL {number}")
    }
}
