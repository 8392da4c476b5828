//! A private PostgreSQL server from Debian's `postgresql`: `initdb` into its own
//! folder, `pg_ctl start` on 127.0.0.1, trust authentication on loopback. With
//! `--tls`, connections over TCP must speak TLS (hostssl lines alone).
//!
//! PostgreSQL refuses to run as root. As root, the cluster runs as the `postgres`
//! user, and its data lives under /var/tmp (root's home is closed to other users).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::certs::{ServerCerts, server_certs};
use super::{
    DeclaredServer, Home, LOOPBACK, Launch, NodeRecord, ServerRecord, TLS_SETTING, ensure_packages,
    node_record, process,
};

/// Debian keeps the server programs in a versioned folder, not on PATH.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("pg_ctl").is_file())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    versions.pop()
}

/// Runs a PostgreSQL program as the user that owns the cluster.
fn as_owner(program: &Path) -> Command {
    if process::is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

/// A PostgreSQL cluster of its own, run as the postgres user.
pub struct Postgres;

impl DeclaredServer for Postgres {
    const NAME: &'static str = "postgres";
    const ALIASES: &'static [&'static str] = &["postgresql"];
    const ABOUT: &'static str = "PostgreSQL from Debian's postgresql";
    const STORE: &'static str = "postgres";
    /// SIGINT is PostgreSQL's "fast" shutdown: it does not wait for clients.
    const STOP_SIGNAL: i32 = libc::SIGINT;

    fn start(launch: &Launch) -> Result<ServerRecord> {
        let port = launch.port_or(LOOPBACK, 5432)?;
        start(
            launch.home,
            &launch.dir,
            launch.options.install,
            port,
            launch.tls(),
        )
    }

    fn restart_node(home: &Home, record: &ServerRecord, _node: usize) -> Result<NodeRecord> {
        let dir = home.server_dir(record.kind);
        let tls = record
            .settings
            .get(TLS_SETTING)
            .is_some_and(|on| on == "on");
        Ok(start(home, &dir, false, record.nodes[0].port, tls)?
            .nodes
            .remove(0))
    }
}

fn start(home: &Home, dir: &Path, install: bool, port: u16, tls: bool) -> Result<ServerRecord> {
    let bin = match bin_dir() {
        Some(bin) => bin,
        None => {
            ensure_packages("pg_ctl", &["postgresql"], install, &[])?;
            bin_dir().context(
                "PostgreSQL is installed but /usr/lib/postgresql/*/bin/pg_ctl is missing",
            )?
        }
    };
    let base = base_folder(home, dir)?;
    let data = base.join("data");
    let log_file = base.join("server.log");
    if !data.join("PG_VERSION").exists() {
        crate::console::note!("initialising {} …", data.display());
        process::run_command(
            as_owner(&bin.join("initdb")).arg("-D").arg(&data).args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ]),
            "initdb",
        )?;
    }
    let certs = match tls {
        true => Some(tls_only(&base, &data)?),
        false => None,
    };
    let ssl = certs.as_ref().map_or_else(String::new, |certs| {
        format!(
            " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
            certs.cert.display(),
            certs.key.display()
        )
    });
    process::run_command(
        as_owner(&bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(&log_file)
            .args(["-w", "-t", "60", "-o"])
            .arg(format!(
                "-c listen_addresses={LOOPBACK} -c port={port} -c unix_socket_directories={} -c shared_buffers=256MB \
                 -c max_connections=300 -c shared_preload_libraries=pg_stat_statements{ssl}",
                base.display()
            ))
            .arg("start"),
        "pg_ctl start",
    )
    .map_err(|e| e.context(format!("see {}", log_file.display())))?;
    let pid: u32 = std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()
        .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
        .context("PostgreSQL started but wrote no postmaster.pid")?;

    let version = ready_database(&bin, port)?;
    let url = match &certs {
        None => format!("postgres://postgres@{LOOPBACK}:{port}/hatshop"),
        Some(certs) => format!(
            "postgres://postgres@{LOOPBACK}:{port}/hatshop?sslmode=verify-full&sslrootcert={}",
            certs.ca.display()
        ),
    };
    Ok(ServerRecord::of::<Postgres>(
        url,
        format!("PostgreSQL {version}"),
        vec![node_record(1, LOOPBACK, port, pid, dir, data, log_file)],
    ))
}

/// The server's TLS files (readable by the postgres user, the key by it alone), and
/// its pg_hba.conf: TLS or nothing over TCP, trust on the server's own socket.
fn tls_only(base: &Path, data: &Path) -> Result<ServerCerts> {
    let certs = server_certs(base, &[LOOPBACK])?;
    if process::is_root() {
        process::run_command(
            Command::new("chown")
                .arg("-R")
                .arg("postgres:")
                .arg(certs.key.parent().context("the TLS folder")?),
            "chown",
        )?;
    }
    let hba = data.join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n",
    )
    .with_context(|| format!("cannot write {}", hba.display()))?;
    Ok(certs)
}

/// The folder of the server's data and log: under /var/tmp when running as root (the
/// postgres user runs the server and must reach it), one per hatshop home.
fn base_folder(home: &Home, dir: &Path) -> Result<PathBuf> {
    Ok(if process::is_root() {
        // A folder the postgres user can reach, one per hatshop home.
        let tag: u64 = home
            .root
            .to_string_lossy()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
        let base = PathBuf::from(format!("/var/tmp/hatshop-postgres/{tag:016x}"));
        std::fs::create_dir_all(&base)?;
        // Only the two folders, never -R: another home's server may be creating and
        // dropping files below them right now, and everything under them is the
        // postgres user's own anyway.
        process::run_command(
            Command::new("chown")
                .arg("postgres:")
                .arg("/var/tmp/hatshop-postgres")
                .arg(&base),
            "chown",
        )?;
        base
    } else {
        dir.to_path_buf()
    })
}

/// The `hatshop` database made if missing; the server's version.
fn ready_database(bin: &Path, port: u16) -> Result<String> {
    let psql = |sql: &str| {
        process::run_command(
            Command::new(bin.join("psql")).args([
                "-h",
                LOOPBACK,
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-tAc",
                sql,
            ]),
            "psql",
        )
    };
    if psql("SELECT 1 FROM pg_database WHERE datname = 'hatshop'")?.trim() != "1" {
        psql("CREATE DATABASE hatshop")?;
    }
    let version = psql("SHOW server_version")?
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    if version.is_empty() {
        bail!("PostgreSQL on {LOOPBACK}:{port} did not say its version");
    }
    Ok(version)
}
